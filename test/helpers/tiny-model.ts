import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { envPython, PYTHON_DIR } from '../../src/setup/python-env.js';
import { tempDir } from './gateway.js';

/** A fresh tiny character-level Llama (python -m alight_worker.tiny) in a temp folder; returns its path. */
export function tinyModel(seed = 0): string {
  const python = envPython();
  const out = join(tempDir('alight-tiny-'), 'model');
  execFileSync(python, ['-m', 'alight_worker.tiny', '--out', out, '--seed', String(seed)], {
    cwd: PYTHON_DIR,
    stdio: 'ignore',
  });
  return out;
}
