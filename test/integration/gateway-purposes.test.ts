import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { buildRunBatch } from '../../src/samples/run-samples.js';
import { rolloutTrace } from '../../src/traces/export.js';
import { type Rig, startRig, tempDir } from '../helpers/gateway.js';

let rig: Rig;
afterEach(async () => rig?.close());

const nextSpeaker = {
  type: 'json_schema' as const,
  json_schema: {
    name: 'check',
    schema: { type: 'object', properties: { reasoning: { type: 'string' }, next_speaker: { type: 'string' } } },
  },
};

// A harness's own calls (here the shapes Gemini CLI's next-speaker check and a self-labelled summary take) are
// recorded with what they are for, and rows are built from the agent's turns unless train.batch.purposes names others.
describe('call purposes', () => {
  it('labels side calls, by their request or the harness header, and builds rows from the main calls', async () => {
    rig = await startRig({ reply: (i) => `answer ${i}` });
    const { rollout, token } = rig.gateway.rollouts.create({ run: 'p' });
    rig.store.ensureRun('p', 'record', {});
    const client = (headers?: Record<string, string>) =>
      new OpenAI({
        baseURL: `${rig.gateway.url}/r/${token}/v1`,
        apiKey: token,
        maxRetries: 0,
        defaultHeaders: headers,
      });
    const user = { role: 'user' as const, content: 'add 2 and 3' };
    const first = await client().chat.completions.create({ model: 'm', messages: [user] });
    const turn = [user, first.choices[0].message, { role: 'user' as const, content: 'and then 4' }];
    await client().chat.completions.create({ model: 'm', messages: [...turn], response_format: nextSpeaker });
    await client({ 'x-alight-purpose': 'side' }).chat.completions.create({ model: 'm', messages: [user] });
    await client().chat.completions.create({ model: 'm', messages: [...turn] });
    // A purpose that is none is refused with the list, before anything reaches the model or the store.
    await expect(
      client({ 'x-alight-purpose': 'summary' }).chat.completions.create({ model: 'm', messages: [user] }),
    ).rejects.toMatchObject({
      status: 400,
      message: expect.stringMatching(/"summary" is not a purpose \(one of main/),
    });
    expect(rig.upstream.log).toHaveLength(4);

    expect(rolloutTrace(rig.store, rollout.id).calls.map((c) => c.purpose)).toEqual([
      'main',
      'next-speaker',
      'side',
      'main',
    ]);
    rig.store.setRolloutState(rollout.id, { state: 'succeeded', exit_code: 0, at: Date.now() });
    rig.store.addReward(rollout.id, 1, null, 'test');
    const build = (purposes?: ('main' | 'side' | 'next-speaker')[]) =>
      buildRunBatch(rig.store, {
        run: 'p',
        out: `${tempDir()}/batch.safetensors`,
        level: 'trajectory',
        purposes,
        advantage: 'grpo',
        lossNorm: 'token-mean',
        missingReward: 'zero',
        maxResponseTokens: 256,
      });
    // The two agent turns make one row; the side calls are counted as left out.
    const main = build();
    expect(main.merge).toMatchObject({ side_calls: 2, breaks: 0 });
    expect(main.metrics.rows).toBe(1);
    // Named, they train too, and split the rollout: the summary is a context of its own, the check takes the turn.
    const all = build(['main', 'side', 'next-speaker']);
    expect(all.merge.side_calls).toBe(0);
    expect(all.metrics.rows).toBe(3);
  });
});
