import { randomBytes } from 'node:crypto';
import { loadConfig, resolveDb } from '../src/config/load.js';
import type { Config } from '../src/config/schema.js';
import { Store } from '../src/store/store.js';

/** Opens the store the flags, ALIGHT_DB or the config file point to, runs `work`, and closes it. */
export async function withStore<T>(opts: { db?: string; config?: string }, work: (store: Store, config: Config) => Promise<T> | T): Promise<T> {
  const { config } = loadConfig(opts.config);
  const store = Store.open(resolveDb(opts.db, config));
  try {
    return await work(store, config);
  } finally {
    store.close();
  }
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function newSecret(): string {
  return randomBytes(24).toString('base64url');
}
