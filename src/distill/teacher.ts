import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import type { TrainConfig } from '../config/train-schema.js';
import { AlightError, ExitCode } from '../errors.js';
import { Worker } from '../worker/client.js';
import { servingSettings } from '../worker/settings.js';
import { promptLogprobs, type ScoringEngine } from './score.js';

/** The run's teacher: the engine that scores the student's rows, and how to stop what alight started for it. */
export interface Teacher {
  engine: ScoringEngine;
  stop(): Promise<void>;
}

const refuse = (message: string): never => {
  throw new AlightError(`--teacher: ${message}`, ExitCode.usage);
};

/**
 * train.distill.teacher, opened: a URL as it is (its model from /models), or a model folder served by a torch worker
 * of its own (log: `logFile`). A folder that is the student's own is refused.
 */
export async function openTeacher(
  c: TrainConfig,
  o: { python: string; logFile: string; timeoutMs: number },
): Promise<Teacher | null> {
  const spec = c.distill.teacher;
  if (!spec) return null;
  if (/^https?:\/\//.test(spec)) return { engine: await urlEngine(spec, c.distill.apiKeyEnv), stop: async () => {} };
  if (!existsSync(join(spec, 'config.json')))
    refuse(
      `${spec} is neither a URL nor a Hugging Face model folder (config.json); an adapter checkpoint: ` +
        'merge it into its base first (alight models merge)',
    );
  if (c.model && existsSync(c.model) && realpathSync(spec) === realpathSync(c.model))
    refuse(`${spec} is the student itself: a teacher must be another model`);
  const worker = Worker.start({ python: o.python, logFile: o.logFile });
  try {
    const init = await worker.call(
      'init',
      servingSettings(spec, { name: 'teacher', seed: c.seed, threads: c.worker.threads }),
      o.timeoutMs,
    );
    return { engine: init.endpoints[0], stop: () => worker.stop() };
  } catch (err) {
    await worker.stop();
    throw err;
  }
}

async function urlEngine(url: string, apiKeyEnv: string | undefined): Promise<ScoringEngine> {
  const apiKey = apiKeyEnv ? process.env[apiKeyEnv] : undefined;
  if (apiKeyEnv && !apiKey) refuse(`train.distill.apiKeyEnv names ${apiKeyEnv}, which is not set`);
  const base = url.replace(/\/$/, '');
  const res = await fetch(`${base}/models`, {
    headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
    signal: AbortSignal.timeout(30_000),
  }).catch((err: Error) => refuse(`cannot reach ${base}/models: ${err.message}`));
  const model = res.ok ? ((await res.json()) as { data?: { id?: string }[] }).data?.[0]?.id : undefined;
  if (!model) return refuse(`${base}/models answered HTTP ${res.status} without a model`);
  return { url: base, model, apiKey };
}

/** Text both models tokenise and score before step 1: words, digits, punctuation, a newline. */
const PROBE = "Distillation probe: 17 + 25 = 42, isn't it? The teacher scores the student's own tokens.\n";

/**
 * Before step 1: the teacher must read the student's token ids as the student does (the same tokenizer: the student's
 * tokenisation of a probe text is the teacher's, an extra first token allowed, as engines differ in adding a BOS), and
 * must not be the student (the same log-probabilities on the probe to 1e-6: no signal at all).
 */
export async function checkTeacher(teacher: ScoringEngine, student: ScoringEngine, timeoutMs: number): Promise<void> {
  const [mine, theirs] = await Promise.all([
    promptLogprobs(student, PROBE, timeoutMs),
    promptLogprobs(teacher, PROBE, timeoutMs),
  ]);
  if (!sameTokens(mine.ids, theirs.ids))
    refuse(
      `the teacher's tokenizer is not the student's: the probe ${JSON.stringify(PROBE.slice(0, 30))}… is ` +
        `[${mine.ids.slice(0, 8).join(', ')}, …] (${mine.ids.length} tokens) for the student and ` +
        `[${theirs.ids.slice(0, 8).join(', ')}, …] (${theirs.ids.length}) for the teacher. Distillation compares ` +
        'log-probabilities of the same token ids, so both must share a tokenizer (one family, e.g. a larger ' +
        'Qwen3 teaching a smaller one)',
    );
  const scored = await promptLogprobs(teacher, mine.ids, timeoutMs);
  const diff = Math.max(...mine.logprobs.map((lp, k) => (lp === null ? 0 : Math.abs(lp - (scored.logprobs[k] ?? 0)))));
  if (diff < 1e-6)
    refuse(
      "the teacher scores the probe exactly as the student does: it is the student's own weights, which teach nothing",
    );
}

/** The same ids, or the same but for one extra token at the start of either. */
function sameTokens(a: number[], b: number[]): boolean {
  const eq = (x: number[], y: number[]): boolean => x.length === y.length && x.every((v, i) => v === y[i]);
  return eq(a, b) || eq(a.slice(1), b) || eq(a, b.slice(1));
}
