import { distillRow } from '../algo/distill.js';
import { AlightError, ExitCode } from '../errors.js';
import type { BatchTensors } from '../samples/batch.js';
import { type EngineAddress, postCompletions } from '../serve/completions-client.js';

/** An OpenAI-compatible engine that answers vLLM's `prompt_logprobs` (vLLM, the torch worker's server). */
export type ScoringEngine = EngineAddress;

export interface Scored {
  /** The prompt's token ids, as the engine read them. */
  ids: number[];
  /** Per position, the log-probability of its token given the ones before (null at position 0). */
  logprobs: (number | null)[];
}

/**
 * The engine's log-probabilities of a prompt's own tokens: one /completions request, `prompt_logprobs: 0` (each
 * token's own, no alternatives), one token generated because engines must generate one. A prompt of ids is checked to
 * come back scored on exactly those ids (an engine that re-tokenised or shifted them would teach the wrong tokens).
 */
export async function promptLogprobs(
  engine: ScoringEngine,
  prompt: string | readonly number[],
  timeoutMs: number,
): Promise<Scored> {
  const body = { prompt, max_tokens: 1, temperature: 0, prompt_logprobs: 0, return_token_ids: true };
  const res = await postCompletions(engine, body, timeoutMs).catch((err: Error) => {
    throw new AlightError(`cannot reach ${engine.url} to score tokens: ${err.message}`, ExitCode.failure);
  });
  const text = await res.text();
  if (!res.ok)
    throw new AlightError(
      `${engine.url} refused to score ${typeof prompt === 'string' ? 'a text' : `${prompt.length} tokens`}: ` +
        `HTTP ${res.status} ${text.slice(0, 300)}`,
      ExitCode.failure,
    );
  return readScored(text, typeof prompt === 'string' ? null : prompt, engine.url);
}

type Entry = Record<string, { logprob?: unknown }> | null;

function readScored(text: string, sent: readonly number[] | null, url: string): Scored {
  const bad = (why: string): never => {
    throw new AlightError(`${url} did not score the tokens sent (${why}): ${text.slice(0, 200)}`, ExitCode.failure);
  };
  let choice: { prompt_logprobs?: Entry[]; prompt_token_ids?: number[] } | undefined;
  try {
    choice = JSON.parse(text)?.choices?.[0];
  } catch {
    bad('not JSON');
  }
  const entries = choice?.prompt_logprobs;
  if (!Array.isArray(entries)) return bad('no prompt_logprobs: the teacher must be vLLM or a torch worker');
  const ids = sent ? [...sent] : choice?.prompt_token_ids;
  if (!Array.isArray(ids) || ids.length !== entries.length)
    return bad(`${entries.length} log-probabilities for ${ids?.length ?? 'unknown'} tokens`);
  const logprobs = entries.map((e, k) => {
    if (k === 0 || e === null) return null;
    const lp = e[String(ids[k])]?.logprob;
    return typeof lp === 'number' ? lp : bad(`position ${k} has no log-probability of token ${ids[k]}`);
  });
  return { ids, logprobs };
}

export interface DistillMetrics {
  /** Mean over the scored loss tokens of log p_student − log p_teacher: the sampled estimate of KL(student ‖ teacher). */
  teacher_kl: number | null;
  /** Share of the batch's loss tokens the teacher scored. */
  teacher_scored_share: number | null;
  teacher_calls: number;
  teacher_score_s: number;
}

/**
 * Each row of the packed batch scored by the teacher (one request per merged row, `concurrency` at once) and λ·(log
 * p_teacher − log p_student) added to the advantage of its loss tokens, in place; the student's log-probabilities are
 * the batch's rollout log-probabilities, those of the policy that sampled the tokens.
 */
export async function distilBatch(
  t: BatchTensors,
  teacher: ScoringEngine,
  o: { coef: number; concurrency: number; timeoutMs: number },
): Promise<DistillMetrics> {
  const started = performance.now();
  const rows = t.row_offsets.length - 1;
  const totals = { lossTokens: 0, scored: 0, gap: 0 };
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < rows) {
      const r = next++;
      const at = Number(t.row_offsets[r]);
      const ids = t.input_ids.subarray(at, Number(t.row_offsets[r + 1]));
      const { logprobs } = await promptLogprobs(teacher, [...ids], o.timeoutMs).catch((err: unknown) => {
        next = rows; // the step fails: no more requests
        throw err;
      });
      const s = distillRow(t.advantages, t.loss_mask, t.rollout_logprobs, logprobs, at, o.coef);
      totals.lossTokens += s.lossTokens;
      totals.scored += s.scored;
      totals.gap += s.gap;
    }
  };
  await Promise.all(Array.from({ length: Math.min(o.concurrency, rows) }, worker));
  return {
    teacher_kl: totals.scored ? -totals.gap / totals.scored : null,
    teacher_scored_share: totals.lossTokens ? totals.scored / totals.lossTokens : null,
    teacher_calls: rows,
    teacher_score_s: (performance.now() - started) / 1000,
  };
}
