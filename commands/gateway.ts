import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { withOverrides } from '../src/config/load.js';
import { startGateway } from '../src/gateway/server.js';
import { configValues } from './flags.js';
import { newSecret, printJson, withStore } from './shared.js';
import { type GatewayFlags, gatewayFlags } from './table/declared-serve.js';

// Drain gives streams in flight this long to finish on SIGTERM.
const drainMs = 30_000;

/** A standalone gateway: runs until SIGTERM or SIGINT, then drains and returns. */
export async function gatewayCommand(flags: GatewayFlags): Promise<void> {
  await withStore(flags, async (store, fileConfig) => {
    // Each flag lands on the config key its option declares (--upstream-kind on upstream.kind).
    const config = withOverrides(fileConfig, configValues(gatewayFlags(), flags));
    const given = flags.adminKey || process.env.ALIGHT_ADMIN_KEY;
    const key = given ? { value: given, file: null } : storedAdminKey(store.path);
    const gateway = await startGateway({
      store,
      gateway: config.gateway,
      upstream: config.upstream,
      adminKey: key.value,
      upstreamApiKey: config.upstream.apiKeyEnv ? process.env[config.upstream.apiKeyEnv] : undefined,
    });
    const info = { url: gateway.url, db: store.path, admin_key_file: key.file, upstream: config.upstream.url ?? null };
    if (flags.json) printJson(info);
    else {
      process.stdout.write(`alight gateway listening on ${gateway.url} (db ${store.path})\n`);
      if (key.file) process.stdout.write(`admin key in ${key.file}\n`);
    }
    // The first SIGTERM or SIGINT drains; a second one stops at once (calls in flight are recorded as failed).
    let signals = 0;
    const stopped = new Promise<void>((resolve) => {
      const onSignal = (name: NodeJS.Signals): void => {
        if (++signals > 1) return void gateway.close();
        process.stderr.write(`alight gateway: ${name}, draining ${gateway.state().inflight} call(s) in flight\n`);
        void gateway.drain(drainMs).then(resolve);
      };
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
    });
    await stopped;
    await gateway.close();
  });
}

/** An admin key kept beside the database (mode 0600), so it is never printed. */
function storedAdminKey(dbPath: string): { value: string; file: string | null } {
  const file = join(dirname(dbPath), 'admin-key');
  if (existsSync(file)) return { value: readFileSync(file, 'utf8').trim(), file };
  const value = newSecret();
  writeFileSync(file, `${value}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return { value, file };
}
