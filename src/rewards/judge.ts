import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { RewardConfig } from '../config/reward.js';
import { AlightError, ExitCode } from '../errors.js';
import { type JudgeCall, type JudgeSettings, judgeGroup, TokenBudget } from '../judge/client.js';
import type { Trajectory } from '../judge/prompt.js';
import { noRedactions, rolloutConversations, Unrenderable } from '../samples/conversation.js';
import { Slots } from '../slots.js';
import type { CachedScore } from '../store/judge.js';
import { JUDGE_FAILED, type RolloutSummary, type Store } from '../store/store.js';
import type { RewardScorer, Scored, ScoreOutcome, ScorerContext } from './types.js';

// reward.judge as a source of rewards: a model scores each group's trajectories against a rubric.

/** A command's judge: its settings (one concurrency limit and token budget for the whole command) and mode. */
interface JudgeRun {
  settings: JudgeSettings;
  single: boolean;
  cache: boolean;
  /** Stragglers of a group stopped this long after the rest ended (run-rollouts' groupDeadlineMs), or undefined. */
  deadlineMs?: number;
}

/** The judge's scorer for a run whose reward settings name one (reward.judge); null without. */
export function judgeScorer({ store, run, reward }: ScorerContext): RewardScorer | null {
  const j = judgeRun(reward);
  return j && { score: (ids, keep) => judgeRollouts(store, j, run, ids, keep), groupDeadlineMs: j.deadlineMs };
}

/** The judge that reward.judge describes, or null without one. The rubric may name a file; the key is read from env. */
function judgeRun(reward: RewardConfig): JudgeRun | null {
  const j = reward.judge;
  if (!j) return null;
  const apiKey = j.apiKeyEnv ? process.env[j.apiKeyEnv] : undefined;
  if (j.apiKeyEnv && !apiKey)
    throw new AlightError(`reward.judge.apiKeyEnv names ${j.apiKeyEnv}, which is not set`, ExitCode.usage);
  if (!(j.min < j.max)) throw new AlightError(`reward.judge: min ${j.min} is not below max ${j.max}`, ExitCode.usage);
  return {
    settings: {
      endpoint: { url: j.url, model: j.model, apiKey },
      rubric: existsSync(j.rubric) ? readFileSync(j.rubric, 'utf8') : j.rubric,
      scale: { min: j.min, max: j.max },
      timeoutMs: j.timeoutS * 1000,
      retries: j.retries,
      maxTokens: j.maxTokens,
      structured: j.structured,
      slots: new Slots(j.concurrency),
      budget: new TokenBudget(j.budgetTokens ?? null),
    },
    single: j.mode === 'single',
    cache: j.cache,
    deadlineMs: j.deadlineS && j.deadlineS * 1000,
  };
}

type JudgeOutcome = ScoreOutcome & {
  keep: (scored: Scored) => void;
  metrics: { judge_calls: number; judge_failed: number; judge_cached_groups: number; judge_tokens: number };
};

const sha = (x: unknown): string => createHash('sha256').update(JSON.stringify(x)).digest('hex');

/** A rollout as the judge reads it: every conversation it held (a sub-agent's too), thinking and signatures left out. */
function trajectory(store: Store, r: RolloutSummary): Trajectory {
  const calls = store.calls.list(r.id).filter((c) => c.status === 'ok');
  return { key: r.id, messages: rolloutConversations(calls, false, noRedactions()).flatMap((c) => c.messages) };
}

/**
 * Scores the succeeded rollouts among `ids` with the judge, a group (or, single, a rollout) a call, all groups at once
 * within the judge's concurrency: each score with the judge's explanation as its reason. A rollout the judge fails gets
 * the `judge-failed` event and no score. Each call is stored apart from the policy's.
 */
async function judgeRollouts(
  store: Store,
  j: JudgeRun,
  run: string,
  ids: string[],
  keep: (scored: Scored) => void,
): Promise<ScoreOutcome> {
  const outcome: JudgeOutcome = {
    keep,
    failed: new Set(),
    metrics: { judge_calls: 0, judge_failed: 0, judge_cached_groups: 0, judge_tokens: 0 },
  };
  const groups = new Map<string, RolloutSummary[]>();
  for (const r of store.rolloutSummaries({ ids }).filter((x) => x.state === 'succeeded')) {
    const key = j.single || r.group_id === null ? r.id : r.group_id;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  await Promise.all([...groups.values()].map((members) => judgeOne(store, j, run, members, outcome)));
  return { failed: outcome.failed, metrics: outcome.metrics };
}

async function judgeOne(store: Store, j: JudgeRun, run: string, members: RolloutSummary[], o: JudgeOutcome) {
  const fail = (ids: string[], problem: string): void => {
    for (const id of ids) {
      store.addEvent(id, JUDGE_FAILED, { problem });
      o.failed.add(id);
    }
    o.metrics.judge_failed += ids.length;
  };
  const group: Trajectory[] = [];
  for (const r of members) {
    try {
      group.push(trajectory(store, r));
    } catch (err) {
      if (!(err instanceof Unrenderable)) throw err;
      fail([r.id], `the judge cannot read it: ${err.message}`);
    }
  }
  if (group.length === 0) return;
  const content = new Map(group.map((t) => [t.key, sha(t.messages)]));
  const { model } = j.settings.endpoint;
  const cacheKey = sha({
    model,
    rubric: j.settings.rubric,
    scale: j.settings.scale,
    group: [...content.values()].sort(),
  });
  const hit = j.cache ? store.judge.cached(cacheKey) : undefined;
  if (hit) o.metrics.judge_cached_groups++;
  const { scores, problem } = hit
    ? { scores: new Map(group.map((t) => [t.key, hit[content.get(t.key)!] ?? null])), problem: null }
    : await ask(store, j, run, group, members[0].group_id, o);
  for (const t of group) {
    const s = scores.get(t.key);
    if (s) o.keep({ id: t.key, value: s.score, reason: s.explanation || null });
  }
  const unscored = group.filter((t) => !scores.get(t.key)).map((t) => t.key);
  if (unscored.length) fail(unscored, problem ?? 'the judge gave no score');
  else if (!hit && j.cache)
    store.judge.putCache(cacheKey, Object.fromEntries(group.map((t) => [content.get(t.key)!, scores.get(t.key)!])));
}

/** The judge asked: its calls stored apart from the policy's, its tokens counted. */
async function ask(
  store: Store,
  j: JudgeRun,
  run: string,
  group: Trajectory[],
  groupId: string | null,
  o: JudgeOutcome,
): Promise<{ scores: Map<string, CachedScore | null>; problem: string | null }> {
  const judged = await judgeGroup(j.settings, group);
  for (const c of judged.calls) storeCall(store, j, run, groupId, group, c, o);
  return judged;
}

function storeCall(
  store: Store,
  j: JudgeRun,
  run: string,
  groupId: string | null,
  group: Trajectory[],
  c: JudgeCall,
  o: JudgeOutcome,
): void {
  store.judge.addCall({ run, groupId, rollouts: group.map((t) => t.key), model: j.settings.endpoint.model, ...c });
  o.metrics.judge_calls++;
  o.metrics.judge_tokens += (c.promptTokens ?? 0) + (c.completionTokens ?? 0);
}
