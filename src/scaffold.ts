import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { AlightError, ExitCode } from './errors.js';
import { packageRoot } from './package-root.js';

const templates = join(packageRoot, 'templates');

/**
 * The starter projects: `basic` records an example harness; `swe` trains a SWE agent with the verl backend on 8 GPUs.
 */
export const scaffoldFiles = {
  basic: ['alight.config.yaml', 'harness.mjs', 'tasks.jsonl'],
  swe: ['alight.config.yaml', 'swe-agent.mjs', 'fetch-repos.mjs', 'recipe.sh'],
} as const satisfies Record<string, readonly string[]>;
export type Template = keyof typeof scaffoldFiles;

/** Writes a template's files into `dir`; refuses to overwrite unless `force`. Returns the paths written. */
export function scaffold(dir: string, template: Template = 'basic', force = false): string[] {
  const files = scaffoldFiles[template];
  const targets = files.map((f) => join(dir, f));
  const existing = targets.filter((t) => existsSync(t));
  if (existing.length && !force) {
    throw new AlightError(`${existing.join(', ')} already exist; pass --force to overwrite`, ExitCode.input);
  }
  mkdirSync(dir, { recursive: true });
  files.forEach((f, i) => {
    copyFileSync(join(templates, template, f), targets[i]);
  });
  return targets;
}
