import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { loadConfig } from '../src/config/load.js';
import { AlightError, ExitCode } from '../src/errors.js';
import { type CurateResult, curateRuns } from '../src/samples/curate-run.js';
import { type Detokenize, diagnose } from '../src/samples/diagnose.js';
import { type BuildResult, buildRunBatch, type DiagnoseResult, diagnoseRun } from '../src/samples/run-samples.js';
import { readSafetensors } from '../src/samples/safetensors.js';
import { parseTaskFilter } from '../src/samples/task-filter.js';
import { loadDetokenizer } from '../src/samples/tokenizer.js';
import { type BatchRow, renderBatch, renderBuild, renderCuration, renderDiagnosis } from '../src/ui/samples-report.js';
import { printJson, withStore } from './shared.js';
import type { BuildFlags, CurateFlags, DiagnoseFlags, ShowFlags } from './table/declared-samples.js';

export async function buildSamples(flags: BuildFlags): Promise<BuildResult> {
  return withStore(flags, (store) => {
    const result = buildRunBatch(store, { ...flags });
    if (flags.json) printJson(result);
    else process.stdout.write(renderBuild(result));
    return result;
  });
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
    else process.stdout.write(renderCuration(result));
    return result;
  });
}

/** `--render <student>` and what goes with it (`--keep-thinking` and `--strip` are refused without it). */
function renderOptions(flags: CurateFlags) {
  if (!flags.render) return undefined;
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

const metaSchema = z.object({
  rollouts: z.array(z.object({ rollout_id: z.string(), reward: z.number(), rows: z.number() })),
  advantage: z.string(),
  loss_norm: z.string(),
  metrics: z.record(z.string(), z.unknown()),
});

/** The tokenizer named by the flag, else by the config file; none when neither names one. */
async function detokenizerFor(flags: Pick<ShowFlags, 'tokenizer' | 'config'>): Promise<Detokenize | undefined> {
  const spec = flags.tokenizer ?? loadConfig(flags.config).config.tokenizer;
  return spec ? loadDetokenizer(spec) : undefined;
}

export async function showSamples(path: string, opts: ShowFlags): Promise<void> {
  const detokenize = await detokenizerFor(opts);
  const { meta, tensors } = readBatch(path);
  const rows = batchRows(meta, tensors, detokenize);
  if (opts.json) return printJson({ meta, rows });
  process.stdout.write(renderBatch(path, meta, rows));
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
function batchRows(meta: BatchMeta, t: BatchTensors, detokenize: Detokenize | undefined): BatchRow[] {
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

export async function diagnoseSamples(flags: DiagnoseFlags): Promise<DiagnoseResult> {
  const detokenize = await detokenizerFor(flags);
  return withStore(flags, (store) => {
    const result = diagnoseRun(store, flags.run, (c, p, at, answers) => diagnose(c, p, at, answers, detokenize));
    if (flags.json) printJson(result);
    else process.stdout.write(renderDiagnosis(result, flags.worst));
    return result;
  });
}
