import { startUiServer } from '../src/web/server.js';
import { withInterrupt, withStore } from './shared.js';
import type { UiFlags } from './table/declared-traces.js';

/** `alight ui`: serves the page until Ctrl-C; prints its URL (open it in a browser). */
export async function uiCommand(opts: UiFlags) {
  return withStore(opts, (store, config) =>
    withInterrupt(async (signal) => {
      const server = await startUiServer(store, opts.port, opts.tokenizer ?? config.tokenizer);
      process.stdout.write(`alight ui: ${server.url} (read-only over ${store.path}; Ctrl-C stops it)\n`);
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      await server.close();
    }),
  );
}
