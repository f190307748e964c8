import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configSchema } from '../../src/config/schema.js';
import { type Gateway, startGateway } from '../../src/gateway/server.js';
import type { RolloutMode } from '../../src/rollouts/state.js';
import { harnessEnv } from '../../src/runner/env.js';
import { Store } from '../../src/store/store.js';
import { type ScriptedOptions, type ScriptedUpstream, startScriptedUpstream } from './scripted-upstream.js';

export const ADMIN_KEY = 'test-admin-key-0123456789';

export function tempDir(prefix = 'alight-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface Rig {
  upstream: ScriptedUpstream;
  gateway: Gateway;
  store: Store;
  dir: string;
  close(): Promise<void>;
}

/** A real gateway on a real socket and SQLite file, in front of a scripted upstream. */
export interface RigOverrides {
  retries?: number;
  timeoutS?: number;
  bodyLimitMb?: number;
  kind?: 'vllm' | 'openai-compatible';
  apiKey?: string;
  holdWhilePausedMs?: number;
}

export async function startRig(scripted: ScriptedOptions = {}, overrides: RigOverrides = {}): Promise<Rig> {
  const upstream = await startScriptedUpstream(scripted);
  const at = await startGatewayAt(upstream.url, overrides);
  return {
    ...at,
    upstream,
    async close() {
      await at.close();
      await upstream.close();
    },
  };
}

/** A real gateway on a real socket and SQLite file, in front of the upstream at `url`. */
export async function startGatewayAt(url: string, overrides: RigOverrides = {}): Promise<Omit<Rig, 'upstream'>> {
  const dir = tempDir();
  const store = Store.open(join(dir, 'alight.db'));
  const config = configSchema.parse({
    upstream: {
      url,
      kind: overrides.kind ?? 'vllm',
      retries: overrides.retries ?? 2,
      timeoutS: overrides.timeoutS ?? 30,
    },
    gateway: { bodyLimitMb: overrides.bodyLimitMb ?? 64 },
  });
  const gateway = await startGateway({
    store,
    gateway: config.gateway,
    upstream: config.upstream,
    adminKey: ADMIN_KEY,
    upstreamApiKey: overrides.apiKey,
    holdWhilePausedMs: overrides.holdWhilePausedMs,
  });
  return {
    gateway,
    store,
    dir,
    async close() {
      await gateway.close();
      store.close();
    },
  };
}

/** A new rollout of `run`, and the environment the harness contract gives its harness. */
export function rolloutEnv(rig: Pick<Rig, 'gateway'>, run = 'r', mode: RolloutMode = 'train') {
  const { rollout, token } = rig.gateway.rollouts.create({ run });
  const env = harnessEnv({
    gatewayUrl: rig.gateway.url,
    token,
    rolloutId: rollout.id,
    run,
    taskId: null,
    mode,
    task: null,
  });
  return { rollout, token, env };
}
