import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { AlightError, ExitCode } from './errors.js';
import { packageRoot } from './package-root.js';

const templates = join(packageRoot, 'templates');
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
