import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { reward as rewardSchema } from '../../src/config/reward.js';
import { openScoring, putReward, rewardSources, scoreRollouts, verifiableReward } from '../../src/rewards/index.js';
import type { RewardSource } from '../../src/rewards/types.js';
import { Store } from '../../src/store/store.js';
import { tempDir } from '../helpers/gateway.js';

// A new source is one file and one registry line: here the file is `toy` (a length penalty, as a process reward
// model or a test-based check would be) and the line is `{ ...rewardSources, toy }`.
// A toy: minus a tenth of the rollout id's length; it cannot score rollout c.
const toy: RewardSource = {
  verifiable: false,
  scorer: ({ reward }) =>
    reward.judge === undefined
      ? {
          groupDeadlineMs: 5_000,
          score: async (ids, keep) => {
            for (const id of ids.filter((x) => x !== 'c')) keep({ id, value: -id.length / 10, reason: 'short' });
            return { failed: new Set(ids.filter((id) => id === 'c')), metrics: { toy_calls: 1 } };
          },
        }
      : null,
};
const sources = { ...rewardSources, toy };

function storeWith(ids: string[]): Store {
  const store = Store.open(join(tempDir(), 'rewards.db'));
  store.ensureRun('r', 'record', {});
  for (const id of ids) {
    const row = { id, run: 'r', task_id: 't', group_id: 'g', attempt: 0, mode: 'record' as const };
    store.insertRollout({ ...row, state: 'succeeded', created_at: Date.now() }, `hash-${id}`);
    putReward(store, id, 'harness', 1, null);
  }
  return store;
}

describe('reward sources (src/rewards/)', () => {
  it('a toy source added in one line scores after the rollouts through the one function, then the weighted sum', async () => {
    const store = storeWith(['a', 'bb', 'c']);
    const reward = rewardSchema.parse({ weights: { verifiable: 0.5 } });
    const scoring = openScoring({ store, run: 'r', reward }, sources);
    expect(scoring.scorers.map((s) => s.name)).toEqual(['toy']);
    expect(scoring.groupDeadlineMs).toBe(5_000);
    const phases: string[] = [];
    const out = await scoreRollouts(store, scoring, ['a', 'bb', 'c'], (name) => phases.push(name));
    expect(phases).toEqual(['toy']);
    expect(out).toEqual({ failed: new Set(['c']), metrics: { toy_calls: 1 } });
    // Each source's row kept, then combined = 0.5 × the harness's 1 + 1 × the toy's score, the reward read last.
    expect(store.rewards('bb').map((r) => [r.source, r.value])).toEqual([
      ['harness', 1],
      ['toy', -0.2],
      ['combined', 0.3],
    ]);
    expect(store.rolloutSummaries({ ids: ['bb'] })[0].reward).toBe(0.3);
    expect(verifiableReward(store, 'bb', sources)).toBe(1);
    // What it could not score keeps only the harness's reward, and no combined row.
    expect(store.rewards('c').map((r) => r.source)).toEqual(['harness']);
  });

  it('a lone score with no verifiable weight is the reward as it is; a run without scorers scores nothing', async () => {
    const store = storeWith(['a']);
    const plain = openScoring({ store, run: 'r', reward: rewardSchema.parse({}) }, sources);
    await scoreRollouts(store, plain, ['a']);
    expect(store.rewards('a').map((r) => r.source)).toEqual(['harness', 'toy']);
    const none = openScoring({ store, run: 'r', reward: rewardSchema.parse({}) });
    expect(none.scorers).toEqual([]);
    expect(await scoreRollouts(store, none, ['a'])).toEqual({ failed: new Set(), metrics: {} });
    expect(Object.keys(rewardSources)).toEqual(['harness', 'reward-cmd', 'judge']);
    // A scorer that fails partway (a judge whose token budget ran out) loses none of the scores it gave.
    const failing = {
      name: 'toy',
      scorer: {
        score: async (_ids: string[], keep: (s: { id: string; value: number; reason: null }) => void) => {
          keep({ id: 'a', value: 0.5, reason: null });
          throw new Error('budget spent');
        },
      },
    };
    const weighted = { ...plain, scorers: [failing], weights: { verifiable: 1, judge: 1 } };
    await expect(scoreRollouts(store, weighted, ['a'])).rejects.toThrow('budget spent');
    expect(store.rewards('a').map((r) => [r.source, r.value])).toEqual([
      ['harness', 1],
      ['toy', -0.1],
      ['toy', 0.5],
      ['combined', 1.5],
    ]);
  });
});
