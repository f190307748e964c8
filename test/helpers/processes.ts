import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * A mark for the processes one CLI run starts: pass `env` to it, then `left()` lists those of its processes (children
 * inherit the variable: workers, Ray, vLLM) still running after 10 s to exit. Unlike a pgrep by name, other test
 * files running at the same time cannot show up in it.
 */
export function processMark(): { env: Record<string, string>; left: () => Promise<string[]> } {
  const entry = `ALIGHT_TEST_MARK=${randomUUID()}`;
  const marked = (): string[] =>
    readdirSync('/proc')
      .filter((pid) => /^\d+$/.test(pid) && pid !== String(process.pid))
      .flatMap((pid) => {
        try {
          if (!readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(entry)) return [];
          return [`${pid} ${readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ').trim()}`];
        } catch {
          return []; // gone meanwhile, or not ours to read
        }
      });
  return {
    env: { ALIGHT_TEST_MARK: entry.split('=')[1] },
    async left() {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const found = marked();
        if (found.length === 0 || Date.now() > deadline) return found;
        await new Promise((r) => setTimeout(r, 250));
      }
    },
  };
}
