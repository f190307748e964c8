import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { runInstall } from '../../src/setup/command.js';
import type { SetupListener } from '../../src/setup/events.js';
import { withLock } from '../../src/setup/lock.js';

/**
 * The real third-party harnesses the protocol tests run, pinned: npm ships each as a platform binary (an optional
 * dependency), ~800 MB together, so they are installed once under ~/.cache/alight rather than as dev dependencies
 * every `npm ci` would fetch.
 */
export const harnesses = {
  claude: { pkg: '@anthropic-ai/claude-code', version: '2.1.332' },
  codex: { pkg: '@openai/codex', version: '0.171.0' },
  gemini: { pkg: '@google/gemini-cli', version: '0.61.0' },
} as const;

const dir = join(homedir(), '.cache', 'alight', 'harnesses');
const stamp = (): string =>
  join(
    dir,
    `.${Object.values(harnesses)
      .map((h) => `${h.pkg.replace('/', '+')}@${h.version}`)
      .join(',')}`,
  );

/** The harness's command. */
export const harnessBin = (name: keyof typeof harnesses): string => join(dir, 'node_modules', '.bin', name);

export async function ensureHarnesses(listener: SetupListener): Promise<void> {
  if (existsSync(stamp())) return;
  mkdirSync(dir, { recursive: true });
  await withLock(join(dir, 'install'), listener, async () => {
    if (existsSync(stamp())) return;
    listener({
      type: 'step',
      message: `installing ${Object.values(harnesses)
        .map((h) => `${h.pkg}@${h.version}`)
        .join(' and ')} (npm, ~800 MB)`,
    });
    await runInstall(
      'npm',
      [
        'install',
        '--prefix',
        dir,
        '--no-audit',
        '--no-fund',
        '--no-save',
        ...Object.values(harnesses).map((h) => `${h.pkg}@${h.version}`),
      ],
      listener,
    );
    writeFileSync(stamp(), '');
  });
}
