import { type CurateResult, droppedText } from '../samples/curate-run.js';
import type { BuildResult, DiagnoseResult } from '../samples/run-samples.js';
import { table } from './summary.js';

/** A batch file's metadata as `alight samples show` prints it. */
export interface BatchHead {
  advantage: string;
  loss_norm: string;
  metrics: Record<string, unknown>;
}

/** One row of a batch file: its rollout, lengths, loss tokens, advantage and weight, and its text when detokenized. */
export interface BatchRow {
  row: number;
  rollout: string;
  reward: number;
  tokens: number;
  prompt: number;
  loss_tokens: number;
  advantage: number;
  weight: number;
  text?: string;
  sampled_text?: string;
}

/** `alight samples build`: what the batch holds and what was dropped or cut on the way. */
export function renderBuild(result: BuildResult): string {
  const m = result.metrics;
  return (
    `wrote ${result.out}: ${m.rollouts} rollouts, ${m.rows} rows, ` +
    `${m.tokens} tokens (${m.loss_tokens} in the loss), ` +
    `mean reward ${m.reward_mean?.toFixed(3) ?? '–'}\n` +
    `merge: ${result.merge.breaks} breaks, ${result.merge.skipped_error_calls} failed calls and ` +
    `${result.merge.skipped_calls_without_tokens} calls without token ids skipped\n` +
    `drops: ${m.dropped_missing_reward} rollouts without reward, ` +
    `${m.dropped_zero_variance} in zero-variance groups, ` +
    `${m.dropped_overlong} cut at max_tokens, ` +
    `${m.dropped_long_prompt_rows} rows over --max-prompt-tokens, ` +
    `${m.dropped_alignment_rows} rows for --row-multiple, ` +
    `${m.truncated_rows} rows cut at --max-response-tokens\n`
  );
}

/** `alight samples curate`: the examples per split, what was left out, the files written. */
export function renderCuration(r: CurateResult): string {
  const split = (name: string, t: CurateResult['train']) =>
    `${name}: ${t.examples} examples, ${t.rows} rows, ${t.lossTokens} tokens in the loss, ` +
    `mean reward ${t.rewardMean?.toFixed(3) ?? '–'}\n`;
  return (
    `${r.rollouts} rollouts of ${r.tasks.seen} tasks (${r.runs.join(', ')}); ` +
    `${r.tasks.kept} tasks give examples (${r.tasks.train} train, ${r.tasks.val} val)\n` +
    split('train', r.train) +
    (r.tasks.val ? split('val', r.val) : '') +
    `left out: ${droppedText(r.dropped)}\n` +
    (r.redacted ? `not in training text: ${droppedText(r.redacted)}\n` : '') +
    (r.files.length ? `wrote ${r.files.join(', ')}\n` : 'dry run: nothing written\n')
  );
}

/** The end of a long text, where a row's latest turns are. */
function clip(text: string, max = 400): string {
  return text.length > max ? `…${text.slice(-max)}` : text;
}

/** `alight samples show`: the batch's metadata, a line per row, then each row's text when there is a tokenizer. */
export function renderBatch(path: string, meta: BatchHead, rows: BatchRow[]): string {
  const texts = rows
    .filter((r) => r.text !== undefined)
    .map(
      (r) =>
        `\nrow ${r.row}:\n  text:    ${JSON.stringify(clip(r.text!))}\n` +
        `  sampled: ${JSON.stringify(clip(r.sampled_text!))}`,
    )
    .join('');
  return (
    `${path}: advantage ${meta.advantage}, loss norm ${meta.loss_norm}\n` +
    `${JSON.stringify(meta.metrics)}\n\n${table(
      ['row', 'rollout', 'reward', 'tokens', 'prompt', 'loss tokens', 'advantage', 'weight'],
      rows.map((r) => [
        r.row,
        r.rollout,
        r.reward,
        r.tokens,
        r.prompt,
        r.loss_tokens,
        r.advantage.toFixed(4),
        r.weight.toExponential(3),
      ]),
    )}\n${texts}${texts && '\n'}`
  );
}

/** `alight samples diagnose`: the merge breaks by kind, then the first `worst` that are not a new context, explained. */
export function renderDiagnosis(result: DiagnoseResult, worst: number): string {
  const kinds =
    Object.entries(result.kinds)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ') || 'none';
  const breaks = result.breaks.filter((x) => x.diagnosis!.kind !== 'new-context').slice(0, worst);
  return (
    `run ${result.run}: ${result.rollouts} rollouts, ${result.merge.breaks} merge breaks (${kinds})\n` +
    breaks
      .map((b) => {
        const d = b.diagnosis!;
        return (
          `\n${b.rollout_id} call ${b.seq}: ${d.kind} at token ${b.position}: ${d.reason}\n` +
          `  history ids: …${b.context.join(' ')}\n  prompt ids:  …${b.prompt.join(' ')}\n` +
          (d.contextText !== undefined
            ? `  history: ${JSON.stringify(d.contextText)}\n  prompt:  ${JSON.stringify(d.promptText)}\n`
            : '')
        );
      })
      .join('')
  );
}
