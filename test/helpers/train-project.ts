import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Store } from '../../src/store/store.js';
import { FIXTURES } from './cli.js';
import { tempDir } from './gateway.js';

/** The held-back harness the train tests run (digits, not the example's vowels) through the openai SDK. */
export const HARNESS = join(FIXTURES, 'digits-harness.mjs');

/** A temp project with these tasks: its folder, its store and its task file. */
export function project(tasks: Record<string, unknown>[]): { dir: string; db: string; tasks: string } {
  const dir = tempDir();
  writeFileSync(join(dir, 'tasks.jsonl'), tasks.map((t) => JSON.stringify(t)).join('\n'));
  return { dir, db: join(dir, '.alight', 'alight.db'), tasks: join(dir, 'tasks.jsonl') };
}

/** `alight train` on `model` for `steps` steps: 2 tasks × 8 rollouts a step, lr 0.01, seed 3. */
export const trainArgs = (model: string, p: { tasks: string }, steps: number): string[] => [
  'train',
  '--model',
  model,
  '--tasks',
  p.tasks,
  '-n',
  '8',
  '--batch-size',
  '2',
  '--steps',
  String(steps),
  '--lr',
  '0.01',
  '--seed',
  '3',
];

/** A run's recorded steps, from its store. */
export function stepsOf(db: string, run: string) {
  const store = Store.open(db);
  try {
    return store.trainSteps(run);
  } finally {
    store.close();
  }
}

/** How many steps a run has recorded so far: 0 before its store exists. */
export function stepCount(db: string, run: string): number {
  try {
    return stepsOf(db, run).length;
  } catch {
    return 0;
  }
}

/** Polls `check` until it holds; a generous bound, for a loaded machine. */
export async function waitFor(check: () => boolean, timeoutMs = 600_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 250));
  }
}
