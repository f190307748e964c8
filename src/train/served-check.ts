import { AlightError, ExitCode } from '../errors.js';
import { type EngineAddress, postCompletions } from '../serve/completions-client.js';
import type { Worker } from '../worker/client.js';

/**
 * The served-policy check, after every sync: the engine that serves the harnesses answers a fixed probe greedily, and
 * the trainer scores the same tokens with the weights it holds. The two must agree, and when the trainer's numbers
 * moved since the last version the engine's must have moved too. The failure it catches is silent otherwise: an
 * update that never reaches the engine (verl #7495: adapters never synced, taken for staleness for two months) keeps
 * sampling the old policy while every metric looks normal.
 */

/** One probe at one version: the tokens the engine chose and their log-probs, served and recomputed. */
export interface Probe {
  version: number;
  tokens: number[];
  served: number[];
  trained: number[];
}

export interface Verdict {
  metrics: { served_logprob_diff: number; served_moved_ratio: number | null };
  error: string | null;
}

const meanAbs = (a: number[], b: number[]): number =>
  a.length === 0 ? 0 : a.reduce((sum, x, i) => sum + Math.abs(x - b[i]), 0) / a.length;
const same = (a: number[], b: number[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * Whether `now` shows the trained policy served: its served log-probs within `tolerance` (mean absolute) of the
 * trainer's, and, where the probe chose the same tokens as at the version before and the trainer's log-probs moved,
 * the served ones moved by at least a tenth as much (an engine still on the old weights moves by nothing).
 */
export function servedVerdict(now: Probe, before: Probe | null, tolerance: number): Verdict {
  const diff = meanAbs(now.served, now.trained);
  const comparable = before !== null && same(now.tokens, before.tokens);
  const trainerMoved = comparable ? meanAbs(now.trained, before.trained) : 0;
  const engineMoved = comparable ? meanAbs(now.served, before.served) : 0;
  const ratio = comparable && trainerMoved > 1e-7 ? engineMoved / trainerMoved : null;
  const metrics = { served_logprob_diff: diff, served_moved_ratio: ratio };
  if (ratio !== null && ratio < 0.1)
    return {
      metrics,
      error:
        `not synced: after the update to version ${now.version} the engine's log-probs of the probe moved ` +
        `${engineMoved.toExponential(1)} and the trainer's ${trainerMoved.toExponential(1)}: the new weights did ` +
        'not reach the engine, which still serves the previous policy',
    };
  if (diff > tolerance)
    return {
      metrics,
      error:
        `synced but different: at version ${now.version} the engine's log-probs of the probe differ from the ` +
        `trainer's by ${diff.toExponential(1)} on average (train.worker.servedTolerance ${tolerance}): it serves ` +
        'another policy than the one trained',
    };
  return { metrics, error: null };
}

/** The probe's prompt: fixed, so that versions compare; any text the model continues will do. */
const PROBE_PROMPT = 'The weather today is';
const PROBE_TOKENS = 8;

/** The probe answer's prompt ids, answer ids and answer log-probs (vLLM and the torch worker: return_token_ids). */
const probeAnswer = (body: unknown) => {
  const choice = (body as { choices?: Record<string, unknown>[] })?.choices?.[0];
  const logprobs = (choice?.logprobs as { token_logprobs?: number[] } | undefined)?.token_logprobs;
  const ids = choice?.token_ids;
  const prompt = choice?.prompt_token_ids ?? (body as { prompt_token_ids?: unknown }).prompt_token_ids;
  if (!Array.isArray(ids) || !Array.isArray(prompt) || !Array.isArray(logprobs) || logprobs.length !== ids.length)
    throw new AlightError(
      `the engine's answer to the served-policy probe lacks token ids or log-probs: ${JSON.stringify(body).slice(0, 200)}`,
      ExitCode.failure,
    );
  return { prompt: prompt as number[], tokens: ids as number[], served: logprobs };
};

/** The probe at `version`: the engine's greedy answer and log-probs, then the worker's recomputation of them. */
export async function probe(engine: EngineAddress, worker: Worker, version: number, timeoutMs: number): Promise<Probe> {
  const ask = { prompt: PROBE_PROMPT, max_tokens: PROBE_TOKENS, temperature: 0, logprobs: 1, return_token_ids: true };
  const res = await postCompletions(engine, ask, timeoutMs);
  if (!res.ok)
    throw new AlightError(`the served-policy probe got HTTP ${res.status}: ${(await res.text()).slice(0, 300)}`);
  const { prompt, tokens, served } = probeAnswer(await res.json());
  const scored = await worker.call('score', { ids: [...prompt, ...tokens] }, timeoutMs);
  // score gives log p(t | before) for positions 1…: the answer's start at prompt.length − 1.
  return { version, tokens, served, trained: scored.logprobs.slice(prompt.length - 1) };
}

export interface ServedCheck {
  /** Probes `version`, judged against the last probe; throws when the engine does not serve the trained policy. */
  check(worker: Worker, version: number): Promise<Verdict['metrics']>;
  /** A new worker or a loaded checkpoint: the next probe has nothing before it to compare with. */
  forget(): void;
}

export function servedPolicyCheck(engine: () => EngineAddress, tolerance: number, timeoutMs: number): ServedCheck {
  let before: Probe | null = null;
  return {
    async check(worker, version) {
      const now = await probe(engine(), worker, version, timeoutMs);
      const verdict = servedVerdict(now, before, tolerance);
      before = now;
      if (verdict.error) {
        const when = version === 0 ? 'on the initial weights' : `after step ${version - 1}`;
        throw new AlightError(`served-policy check ${when}: ${verdict.error}`, ExitCode.failure);
      }
      return verdict.metrics;
    },
    forget() {
      before = null;
    },
  };
}
