import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import type { AdvantageEstimator, MissingRewardPolicy } from '../src/algo/advantages.js';
import type { LossNorm } from '../src/algo/loss-weights.js';
import { loadConfig } from '../src/config/load.js';
import { AlightError, ExitCode } from '../src/errors.js';
import type { Selection } from '../src/samples/curate.js';
import { type CurateResult, curateRuns, droppedText } from '../src/samples/curate-run.js';
import { type Detokenize, diagnose } from '../src/samples/diagnose.js';
import type { MergeLevel } from '../src/samples/merge.js';
import { type BuildResult, buildRunBatch, type DiagnoseResult, diagnoseRun } from '../src/samples/run-samples.js';
import { readSafetensors } from '../src/samples/safetensors.js';
import { parseTaskFilter } from '../src/samples/task-filter.js';
import { loadDetokenizer } from '../src/samples/tokenizer.js';
import { table } from '../src/ui/summary.js';
import { printJson, withStore } from './shared.js';

export interface BuildFlags {
  run: string;
  out: string;
  level: MergeLevel;
  advantage: AdvantageEstimator;
  lossNorm: LossNorm;
  missingReward: MissingRewardPolicy;
  maxPromptTokens?: number;
  maxResponseTokens: number;
  dropZeroVariance?: boolean;
  dropOverlong?: boolean;
  rowMultiple?: number;
  db?: string;
  json?: boolean;
}

export async function buildSamples(flags: BuildFlags): Promise<BuildResult> {
  return withStore(flags, (store) => {
    const result = buildRunBatch(store, { ...flags });
    if (flags.json) printJson(result);
    else {
      const m = result.metrics;
      process.stdout.write(
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
          `${m.truncated_rows} rows cut at --max-response-tokens\n`,
      );
    }
    return result;
  });
}

export interface CurateFlags {
  run: string[];
  out?: string;
  filter?: string;
  select: Selection;
  maxPerTask?: number;
  minReward?: number;
  solvedAt: number;
  keepTruncated?: boolean;
  val: number;
  seed: number;
  parquet?: boolean;
  jsonl?: boolean;
  dryRun?: boolean;
  render?: string;
  keepThinking?: boolean;
  strip?: string;
  db?: string;
  config?: string;
  json?: boolean;
}

export async function curateSamples(flags: CurateFlags): Promise<CurateResult> {
  if (!flags.out && !flags.dryRun) throw new AlightError('--out <dir> is required (or --dry-run)', ExitCode.usage);
  if (flags.select === 'best-n' && flags.maxPerTask === undefined)
    throw new AlightError('--select best-n needs --max-per-task <n>', ExitCode.usage);
  const filter = flags.filter === undefined ? undefined : parseTaskFilter(flags.filter);
  const render = renderOptions(flags);
  return withStore(flags, async (store) => {
    const result = await curateRuns(store, {
      ...flags,
      filter,
      keepTruncated: Boolean(flags.keepTruncated),
      valTasks: flags.val,
      runs: flags.run,
      out: flags.out ?? '',
      parquet: Boolean(flags.parquet),
      jsonl: Boolean(flags.jsonl),
      dryRun: Boolean(flags.dryRun),
      render,
      log: (line) => process.stderr.write(`alight: ${line}\n`),
    });
    if (flags.json) printJson(result);
    else process.stdout.write(curateSummary(result));
    return result;
  });
}

/** `--render <student>` and what goes with it; `--keep-thinking` and `--strip` mean nothing without it. */
function renderOptions(flags: CurateFlags) {
  if (!flags.render) {
    if (flags.keepThinking || flags.strip)
      throw new AlightError('--keep-thinking and --strip apply to --render <student model>', ExitCode.usage);
    return undefined;
  }
  if (!existsSync(join(flags.render, 'tokenizer_config.json')))
    throw new AlightError(`--render ${flags.render}: no Hugging Face tokenizer there`, ExitCode.input);
  let strip: RegExp | undefined;
  try {
    strip = flags.strip === undefined ? undefined : new RegExp(flags.strip, 'g');
  } catch (err) {
    throw new AlightError(`--strip: ${(err as Error).message}`, ExitCode.usage);
  }
  return { model: resolve(flags.render), keepThinking: Boolean(flags.keepThinking), strip };
}

function curateSummary(r: CurateResult): string {
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

const metaSchema = z.object({
  rollouts: z.array(z.object({ rollout_id: z.string(), reward: z.number(), rows: z.number() })),
  advantage: z.string(),
  loss_norm: z.string(),
  metrics: z.record(z.string(), z.unknown()),
});

/** The tokenizer named by the flag, else by the config file; none when neither names one. */
async function detokenizerFor(flags: { tokenizer?: string; config?: string }): Promise<Detokenize | undefined> {
  const spec = flags.tokenizer ?? loadConfig(flags.config).config.tokenizer;
  return spec ? loadDetokenizer(spec) : undefined;
}

export async function showSamples(
  path: string,
  opts: { json?: boolean; tokenizer?: string; config?: string },
): Promise<void> {
  const detokenize = await detokenizerFor(opts);
  const { meta, tensors } = readBatch(path);
  const rows = batchRows(meta, tensors, detokenize);
  if (opts.json) return printJson({ meta, rows });
  const texts = rows
    .filter((r) => r.text !== undefined)
    .map(
      (r) =>
        `\nrow ${r.row}:\n  text:    ${JSON.stringify(clip(r.text!))}\n` +
        `  sampled: ${JSON.stringify(clip(r.sampled_text!))}`,
    )
    .join('');
  process.stdout.write(
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
      )}\n${texts}${texts && '\n'}`,
  );
}

type BatchMeta = z.infer<typeof metaSchema>;
type BatchTensors = Record<string, ArrayLike<number>> & { row_offsets: BigInt64Array };

/** A batch file's tensors and alight's metadata; an unreadable file or one alight did not write is an input error. */
function readBatch(path: string): { meta: BatchMeta; tensors: BatchTensors } {
  let file: ReturnType<typeof readSafetensors>;
  try {
    file = readSafetensors(path);
  } catch (err) {
    throw new AlightError(`cannot read ${path}: ${(err as Error).message}`, ExitCode.input);
  }
  const meta = metaSchema.safeParse(JSON.parse(file.metadata.alight ?? 'null'));
  if (!meta.success)
    throw new AlightError(`${path} is not an alight batch (no valid __metadata__.alight)`, ExitCode.input);
  return { meta: meta.data, tensors: file.tensors as unknown as BatchTensors };
}

/** One summary per row: its rollout, lengths, loss tokens, advantage and weight (at its first loss token), text. */
function batchRows(meta: BatchMeta, t: BatchTensors, detokenize: Detokenize | undefined) {
  return Array.from({ length: t.prompt_lengths.length }, (_, b) => {
    const from = Number(t.row_offsets[b]);
    const to = Number(t.row_offsets[b + 1]);
    let loss = 0;
    for (let i = from; i < to; i++) loss += t.loss_mask[i];
    const first = Array.from({ length: to - from }, (_, k) => from + k).find((i) => t.loss_mask[i] === 1);
    const rollout = meta.rollouts[t.rollout_index[b]];
    const ids = detokenize ? Array.from(t.input_ids as ArrayLike<number>).slice(from, to) : [];
    return {
      row: b,
      rollout: rollout.rollout_id,
      reward: rollout.reward,
      tokens: to - from,
      prompt: t.prompt_lengths[b],
      loss_tokens: loss,
      advantage: first === undefined ? 0 : t.advantages[first],
      weight: first === undefined ? 0 : t.loss_weights[first],
      ...(detokenize && {
        text: detokenize(ids),
        sampled_text: detokenize(ids.filter((_, k) => t.loss_mask[from + k] === 1)),
      }),
    };
  });
}

/** The end of a long text, where a row's latest turns are. */
function clip(text: string, max = 400): string {
  return text.length > max ? `…${text.slice(-max)}` : text;
}

export async function diagnoseSamples(flags: {
  run: string;
  tokenizer?: string;
  config?: string;
  db?: string;
  json?: boolean;
  worst: number;
}): Promise<DiagnoseResult> {
  const detokenize = await detokenizerFor(flags);
  return withStore(flags, (store) => {
    const result = diagnoseRun(store, flags.run, (c, p, at, answers) => diagnose(c, p, at, answers, detokenize));
    if (flags.json) printJson(result);
    else {
      const kinds =
        Object.entries(result.kinds)
          .filter(([, n]) => n > 0)
          .map(([k, n]) => `${k} ${n}`)
          .join(', ') || 'none';
      process.stdout.write(
        `run ${result.run}: ${result.rollouts} rollouts, ${result.merge.breaks} merge breaks (${kinds})\n`,
      );
      for (const b of result.breaks.filter((x) => x.diagnosis!.kind !== 'new-context').slice(0, flags.worst)) {
        const d = b.diagnosis!;
        process.stdout.write(
          `\n${b.rollout_id} call ${b.seq}: ${d.kind} at token ${b.position}: ${d.reason}\n` +
            `  history ids: …${b.context.join(' ')}\n  prompt ids:  …${b.prompt.join(' ')}\n` +
            (d.contextText !== undefined
              ? `  history: ${JSON.stringify(d.contextText)}\n  prompt:  ${JSON.stringify(d.promptText)}\n`
              : ''),
        );
      }
    }
    return result;
  });
}
