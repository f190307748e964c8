import { describe, expect, it } from 'vitest';
import { buildBatch } from '../../src/samples/batch.js';
import { mergeCalls } from '../../src/samples/merge.js';
import type { CallRecord } from '../../src/store/calls.js';
import { encodeRequest } from '../../src/store/request-json.js';
import { Store } from '../../src/store/store.js';

// A logprob the engine did not give (null in its answer) is NaN in the store, never 0 (probability 1): read back as
// missing, and merged and batched as the docs say missing logprobs are (0 on a token still trained on).
const call = (seq: number, prompt: number[], completion: number[], logprobs: number[]): CallRecord => ({
  rolloutId: 'ro_1',
  seq,
  protocol: 'openai.chat',
  stream: false,
  request: encodeRequest({ model: 'm', messages: [] }),
  response: {},
  promptIds: prompt,
  completionIds: completion,
  completionLogprobs: logprobs,
  promptTokens: prompt.length,
  completionTokens: completion.length,
  status: 'ok',
  httpStatus: 200,
  error: null,
  latencyMs: 1,
  modelVersion: 0,
  finishReason: 'stop',
});

describe('a missing logprob', () => {
  it('is kept missing by the store, and merged and batched as missing (0), not as NaN', () => {
    const store = Store.open(':memory:');
    store.calls.add(call(0, [1, 2], [10, 11], [-0.5, Number.NaN]));
    store.calls.add(call(1, [1, 2, 10, 11, 3], [12], [Number.NaN]));
    expect(store.calls.list('ro_1').map((c) => c.completionLogprobs)).toEqual([[-0.5, Number.NaN], [Number.NaN]]);
    const { rows } = mergeCalls(store.calls.tokenCalls('ro_1'), 'trajectory');
    expect(Array.from(rows[0].mask)).toEqual([0, 0, 1, 1, 0, 1]);
    expect(Array.from(rows[0].logprobs)).toEqual([0, 0, -0.5, 0, 0, 0]);
    const { tensors } = buildBatch([{ rolloutId: 'ro_1', groupId: null, reward: 1, rows }], {
      advantage: 'grpo',
      lossNorm: 'token-mean',
      missingReward: 'zero',
      maxResponseTokens: 16,
    });
    expect(Array.from(tensors.rollout_logprobs)).toEqual([0, 0, -0.5, 0, 0, 0]);
    store.close();
  });
});
