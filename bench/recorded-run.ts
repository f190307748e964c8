import { encodeRequest } from '../src/store/request-json.js';
import { Store } from '../src/store/store.js';

export interface AgentRunShape {
  rollouts: number;
  turns: number;
  observation: number;
  answer: number;
  run?: string;
  groups?: number;
}

/**
 * Records a run whose rollouts are agent loops straight into the store: each turn's prompt is the last prompt +
 * answer + an observation, so contexts grow to turns × (observation + answer) tokens. Returns the rollout ids.
 */
export function recordAgentRun(db: string, shape: AgentRunShape): string[] {
  const run = shape.run ?? 'bench';
  const groups = shape.groups ?? 64;
  const store = Store.open(db);
  let rng = 1;
  const next = (): number => {
    rng = (rng * 1103515245 + 12345) % 2 ** 31;
    return rng % 150_000;
  };
  const ids: string[] = [];
  store.db.transaction(() => {
    for (let r = 0; r < shape.rollouts; r++) {
      const id = `ro_${run}_${r}`;
      ids.push(id);
      store.insertRollout(
        {
          id,
          run,
          task_id: `t${r % groups}`,
          group_id: `${run}/g${r % groups}`,
          attempt: 0,
          mode: 'record',
          state: 'succeeded',
          created_at: r,
        },
        `hash_${run}_${r}`,
      );
      store.addReward(id, (r * 7) % 3 === 0 ? 1 : 0, null, 'bench');
      let context: number[] = [];
      for (let t = 0; t < shape.turns; t++) {
        const prompt = [...context, ...Array.from({ length: shape.observation }, next)];
        const completion = Array.from({ length: shape.answer }, next);
        store.calls.add({
          rolloutId: id,
          seq: t,
          protocol: 'openai.chat',
          stream: false,
          request: encodeRequest({ messages: [{ role: 'user', content: `turn ${t}` }] }),
          response: null,
          promptIds: prompt,
          completionIds: completion,
          completionLogprobs: completion.map((x) => -(x % 1000) / 1000),
          promptTokens: prompt.length,
          completionTokens: completion.length,
          status: 'ok',
          httpStatus: 200,
          error: null,
          latencyMs: 1,
          modelVersion: 0,
          finishReason: 'stop',
        });
        context = [...prompt, ...completion];
      }
      store.calls.forget(id);
    }
  })();
  store.ensureRun(run, 'record', null);
  store.close();
  return ids;
}
