import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AlightError, ExitCode } from './errors.js';

// dist/src/scaffold.js → the package's templates/ folder.
const templates = fileURLToPath(new URL('../../templates/', import.meta.url));
export const scaffoldFiles = ['alight.config.yaml', 'harness.mjs', 'tasks.jsonl'] as const;

/** Writes the starter files into `dir`; refuses to overwrite unless `force`. Returns the paths written. */
export function scaffold(dir: string, force = false): string[] {
  const targets = scaffoldFiles.map((f) => join(dir, f));
  const existing = targets.filter((t) => existsSync(t));
  if (existing.length && !force) {
    throw new AlightError(`${existing.join(', ')} already exist; pass --force to overwrite`, ExitCode.input);
  }
  mkdirSync(dir, { recursive: true });
  scaffoldFiles.forEach((f, i) => copyFileSync(join(templates, f), targets[i]));
  return targets;
}
