import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { rolloutTrace } from '../../src/traces/export.js';
import { type Rig, startRig } from '../helpers/gateway.js';

let rig: Rig;
afterEach(async () => rig?.close());

function client(rig: Rig, token: string): OpenAI {
  return new OpenAI({ baseURL: `${rig.gateway.url}/r/${token}/v1`, apiKey: token, maxRetries: 0 });
}

describe('gateway with the openai SDK', () => {
  it('records exact token ids and logprobs for streamed and whole chat calls', async () => {
    rig = await startRig({ reply: (i) => `answer number ${i}` });
    const { rollout, token } = rig.gateway.rollouts.create({ run: 'r1', taskId: 't1' });
    const openai = client(rig, token);
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'hello' }];
    // The harness says no logprobs; training needs them, so the gateway asks anyway.
    const first = await openai.chat.completions.create({ model: 'anything', messages, logprobs: false });
    expect(first.choices[0].message.content).toBe('answer number 0');
    messages.push(first.choices[0].message as OpenAI.ChatCompletionMessageParam, { role: 'user', content: 'again' });
    const stream = await openai.chat.completions.create({ model: 'anything', messages, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('answer number 1');

    const trace = rolloutTrace(rig.store, rollout.id);
    expect(trace.calls).toHaveLength(2);
    trace.calls.forEach((call, i) => {
      const produced = rig.upstream.log[i];
      expect(call.seq).toBe(i);
      expect(call.prompt_token_ids).toEqual(produced.promptIds);
      expect(call.completion_token_ids).toEqual(produced.completionIds);
      expect(call.completion_logprobs).toEqual(produced.logprobs);
      expect(call.status).toBe('ok');
      expect(call.finish_reason).toBe('stop');
    });
    expect(trace.calls[1].stream).toBe(true);
    expect(trace.calls[1].response).toMatchObject({
      object: 'chat.completion',
      choices: [{ message: { content: 'answer number 1' } }],
    });
    expect(trace.calls[1].request.messages).toEqual(messages);
    expect(rig.upstream.log[0].request).toMatchObject({
      model: 'scripted-model',
      return_token_ids: true,
      logprobs: true,
    });
  });

  it(
    'gives the harness the answer it asked for: its model ' + 'name, and token fields only when it asked for them',
    async () => {
      rig = await startRig({ reply: (i) => `answer ${i}` });
      const { token } = rig.gateway.rollouts.create({ run: 'r1' });
      const url = `${rig.gateway.url}/r/${token}/v1/chat/completions`;
      const post = async (body: object): Promise<string> =>
        (
          await fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ model: 'my-agent-model', messages: [{ role: 'user', content: 'hi' }], ...body }),
          })
        ).text();
      for (const text of [await post({}), await post({ stream: true })]) {
        expect(text).toContain('"model":"my-agent-model"');
        expect(text).not.toMatch(/token_ids|logprobs"?:\s*\{|scripted-model/);
      }
      const asked = JSON.parse(await post({ return_token_ids: true, logprobs: true }));
      expect(asked.prompt_token_ids).toEqual(rig.upstream.log[2].promptIds);
      expect(asked.choices[0].token_ids).toEqual(rig.upstream.log[2].completionIds);
      expect(asked.choices[0].logprobs.content).toHaveLength(rig.upstream.log[2].completionIds.length);
    },
  );

  it('records completions calls, streamed and whole', async () => {
    rig = await startRig();
    const { rollout, token } = rig.gateway.rollouts.create({ run: 'r1' });
    const openai = client(rig, token);
    await openai.completions.create({ model: 'm', prompt: 'once upon' });
    const stream = await openai.completions.create({ model: 'm', prompt: 'once upon a time', stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.text ?? '';
    expect(text).toBe('reply 1');
    const trace = rolloutTrace(rig.store, rollout.id);
    trace.calls.forEach((call, i) => {
      expect(call.protocol).toBe('openai.completions');
      expect(call.prompt_token_ids).toEqual(rig.upstream.log[i].promptIds);
      expect(call.completion_token_ids).toEqual(rig.upstream.log[i].completionIds);
      expect(call.completion_logprobs).toEqual(rig.upstream.log[i].logprobs);
    });
    expect(trace.calls[1].request.prompt).toBe('once upon a time');
  });

  it(
    'passes an openai-compatible upstream through, with token ' +
      'fields null and the upstream key sent but never stored',
    async () => {
      rig = await startRig({}, { kind: 'openai-compatible', apiKey: 'sk-upstream-secret' });
      const { rollout, token } = rig.gateway.rollouts.create({ run: 'r1' });
      await client(rig, token).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
      const sent = rig.upstream.log[0];
      expect(sent.request).not.toHaveProperty('return_token_ids');
      expect(sent.request).not.toHaveProperty('logprobs');
      expect(sent.authorization).toBe('Bearer sk-upstream-secret');
      const [call] = rolloutTrace(rig.store, rollout.id).calls;
      expect(call).toMatchObject({
        status: 'ok',
        prompt_token_ids: null,
        completion_token_ids: null,
        completion_logprobs: null,
      });
      expect(JSON.stringify(call)).not.toContain('sk-upstream-secret');
    },
  );
});
