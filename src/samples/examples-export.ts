// Curated examples in the formats other trainers read: token ids and loss masks as Parquet, conversations as chat JSONL.
import { writeFileSync } from 'node:fs';
import type { SchemaElement } from 'hyparquet';
import { parquetWriteFile } from 'hyparquet-writer';
import type { Store } from '../store/store.js';
import { noRedactions, rolloutConversations, Unrenderable } from './conversation.js';
import type { Candidate } from './curate.js';

/** A list<int32> column as Parquet's three-level LIST, the shape pyarrow, Hugging Face datasets and verl read. */
const intList = (name: string): SchemaElement[] => [
  { name, repetition_type: 'REQUIRED', converted_type: 'LIST', num_children: 1 },
  { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
  { name: 'element', type: 'INT32', repetition_type: 'REQUIRED' },
];

/**
 * Curated examples for other trainers: one Parquet row per training row, its token ids and loss mask (1 on the tokens
 * the policy sampled), the prompt's length, and where it came from.
 */
export function writeExamplesParquet(file: string, examples: readonly Candidate[]): string {
  const rows = examples.flatMap((c) => c.rows.map((row) => ({ c, row })));
  const schema: SchemaElement[] = [
    { name: 'root', num_children: 6 },
    { name: 'rollout_id', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
    { name: 'task_id', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
    { name: 'reward', type: 'DOUBLE', repetition_type: 'OPTIONAL' },
    { name: 'prompt_length', type: 'INT32', repetition_type: 'REQUIRED' },
    ...intList('input_ids'),
    ...intList('loss_mask'),
  ];
  parquetWriteFile({
    filename: file,
    schema,
    columnData: [
      { name: 'rollout_id', data: rows.map(({ c }) => c.rolloutId) },
      { name: 'task_id', data: rows.map(({ c }) => c.taskId) },
      { name: 'reward', data: rows.map(({ c }) => c.reward) },
      { name: 'prompt_length', data: rows.map(({ row }) => row.promptLength) },
      { name: 'input_ids', data: rows.map(({ row }) => Array.from(row.tokens)) },
      { name: 'loss_mask', data: rows.map(({ row }) => Array.from(row.mask)) },
    ],
  });
  return file;
}

/**
 * Curated examples as chat JSONL (`messages` and `tools`, the shape TRL's SFTTrainer, verl's multi-turn SFT dataset and
 * most others read): one line per conversation of each example, read from its recorded calls as `--render` reads them
 * (arguments as objects, signatures and encrypted reasoning never written, thinking only with `keepThinking`). A rollout
 * whose calls are not conversations (completions) is left out; how many is returned.
 */
export function writeExamplesJsonl(
  store: Store,
  file: string,
  examples: readonly Candidate[],
  keepThinking: boolean,
): { file: string; skipped: number } {
  let skipped = 0;
  const lines = examples.flatMap((c) => {
    const calls = store.calls.list(c.rolloutId).filter((call) => call.status === 'ok');
    try {
      return rolloutConversations(calls, keepThinking, noRedactions()).map(
        (conversation) =>
          `${JSON.stringify({ rollout_id: c.rolloutId, task_id: c.taskId, reward: c.reward, ...conversation })}\n`,
      );
    } catch (err) {
      if (!(err instanceof Unrenderable)) throw err;
      skipped++;
      return [];
    }
  });
  writeFileSync(file, lines.join(''));
  return { file, skipped };
}
