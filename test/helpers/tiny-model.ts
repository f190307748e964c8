import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { envPython, PYTHON_DIR } from '../../src/setup/python-env.js';
import { tempDir } from './gateway.js';
import { place } from './place.js';

/**
 * A fresh copy of the tiny character-level Llama of `seed` (python -m alight_worker.tiny) in a temp folder of its own,
 * which the test may change; returns its path. Each seed is made once per temp root (the suite's run) and copied
 * after: making one is ~7 s of importing torch, and the suite asks for one ~30 times. The generator's hash is in the
 * name, so a copy never comes from an older generator.
 */
export function tinyModel(seed = 0): string {
  const made = join(tmpdir(), `alight-tiny-${generator()}-${seed}`);
  if (!existsSync(made)) {
    const building = `${made}.${process.pid}`;
    execFileSync(envPython(), ['-m', 'alight_worker.tiny', '--out', building, '--seed', String(seed)], {
      cwd: PYTHON_DIR,
      stdio: 'ignore',
    });
    place(building, made);
  }
  const out = join(tempDir('alight-tiny-'), 'model');
  cpSync(made, out, { recursive: true });
  return out;
}

let hash: string | undefined;
const generator = (): string =>
  (hash ??= createHash('sha256')
    .update(readFileSync(join(PYTHON_DIR, 'alight_worker', 'tiny.py')))
    .digest('hex')
    .slice(0, 12));
