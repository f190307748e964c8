// bench:agent's evaluation: a model folder's pass@1 on held-out tasks through the harness itself (the Agents SDK
// agent of examples/calculator/, every turn through alight's gateway), served by the torch worker as training serves it
// (`alight record --serve-worker`): greedy, and over k sampled episodes a task at the training's sampling. Unlike
// bench:learn's single-turn evaluation, the harness is the thing measured (its tool loop, the template's calls, the
// parser), so its start-up is paid: ~0.4 s of node a rollout, 16 at once.
import { join } from 'node:path';
import { probeOrThrow } from '../../src/process/launch.js';
import type { Evaluation } from '../learn/report.js';

interface Rollout {
  task_id: string;
  reward: number | null;
  calls: { response: { choices?: { message?: { content?: string | null; tool_calls?: unknown[] } }[] } | null }[];
}

/** Per-episode statistics of an evaluation: tool calls made, replies that tried one the parser could not read. */
export interface TurnStats {
  episodes: number;
  toolCallsPerEpisode: number;
  /** Model turns that wrote `<tool_call>` without a call the worker could read (bad JSON, no name), per episode. */
  malformedPerEpisode: number;
  /** Episodes without a single tool call. */
  noToolCall: number;
  /** Model turns of the solved episodes (2: a call and the answer). */
  turnsToSuccess: number | null;
}

export interface AgentEvaluation extends Evaluation {
  turns: TurnStats;
}

const mean = (xs: number[]): number | null => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

/** The rollouts of a recorded run with their calls, from the store of `dir`. */
function rolloutsOf(bin: string, dir: string, run: string): Rollout[] {
  const jsonl = probeOrThrow(process.execPath, [bin, 'traces', 'export', '--run', run], { cwd: dir });
  return jsonl.trim()
    ? jsonl
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
    : [];
}

export function turnStats(rollouts: Rollout[]): TurnStats {
  const messages = (r: Rollout) => r.calls.map((c) => c.response?.choices?.[0]?.message ?? {});
  const calls = (r: Rollout) => messages(r).filter((m) => m.tool_calls?.length).length;
  const malformed = (r: Rollout) =>
    messages(r).filter((m) => !m.tool_calls?.length && (m.content ?? '').includes('<tool_call>')).length;
  const per = (f: (r: Rollout) => number) => mean(rollouts.map(f)) ?? 0;
  return {
    episodes: rollouts.length,
    toolCallsPerEpisode: per(calls),
    malformedPerEpisode: per(malformed),
    noToolCall: rollouts.filter((r) => calls(r) === 0).length,
    turnsToSuccess: mean(rollouts.filter((r) => r.reward === 1).map((r) => r.calls.length)),
  };
}

/**
 * `folder` on `tasks` through the calculator harness, `samples` episodes a task (1 and temperature 0: greedy), in the
 * project `dir` as run `run`; a task passes an episode at reward 1.
 */
export async function evaluateAgent(o: {
  bin: string;
  harness: string;
  folder: string;
  tasks: string;
  taskIds: string[];
  dir: string;
  run: string;
  samples: number;
  sampling: { temperature: number; topP: number };
  step: (cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv) => Promise<number>;
}): Promise<AgentEvaluation> {
  const greedy = o.samples === 1 && o.sampling.temperature === 0;
  const args = ['record', '--serve-worker', o.folder, '--tasks', o.tasks, '-n', String(o.samples)];
  args.push('--concurrency', '16', '--run', o.run, '--json', '--', 'node', o.harness);
  const env = {
    CALCULATOR_TEMPERATURE: String(o.sampling.temperature),
    CALCULATOR_TOP_P: String(o.sampling.topP),
  };
  const seconds = await o.step(process.execPath, [o.bin, ...args], o.dir, env);
  const rollouts = rolloutsOf(o.bin, o.dir, o.run);
  const passes = new Map(o.taskIds.map((id) => [id, 0]));
  for (const r of rollouts) if (r.reward === 1) passes.set(r.task_id, (passes.get(r.task_id) ?? 0) + 1);
  const perTask = o.taskIds.map((id) => passes.get(id) ?? 0);
  const rate = perTask.reduce((a, b) => a + b, 0) / (o.taskIds.length * o.samples);
  return {
    model: o.folder,
    submitted_ids: o.taskIds,
    resolved_ids: greedy ? o.taskIds.filter((id) => (passes.get(id) ?? 0) > 0) : [],
    pass_rate: greedy ? rate : Number.NaN,
    ...(greedy ? {} : { sampled_pass_rate: rate, sampled_per_task: perTask }),
    seconds,
    turns: turnStats(rollouts),
  };
}

export const calculatorHarness = (root: string): string => join(root, 'examples', 'calculator', 'harness.mjs');
