import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { rolloutTrace } from '../../src/traces/export.js';
import { type Rig, startRig } from '../helpers/gateway.js';

let rig: Rig;
afterEach(async () => rig?.close());

describe('trace storage', () => {
  it('stores a 50-turn rollout growing to 32k tokens in under 3× its longest prompt + completion', async () => {
    rig = await startRig({ reply: (i) => `turn ${i} `.padEnd(140, 'z') });
    const { rollout, token } = rig.gateway.rollouts.create({ run: 'long' });
    const openai = new OpenAI({ baseURL: `${rig.gateway.url}/r/${token}/v1`, apiKey: token, maxRetries: 0 });
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'system', content: 'agent' }];
    for (let turn = 0; turn < 50; turn++) {
      messages.push({ role: 'user', content: `observation ${turn} `.padEnd(500, 'o') });
      const stream = turn % 2 === 1;
      let content = '';
      if (stream) {
        for await (const c of await openai.chat.completions.create({ model: 'm', messages, stream: true }))
          content += c.choices[0]?.delta?.content ?? '';
      } else {
        content = (await openai.chat.completions.create({ model: 'm', messages })).choices[0].message.content!;
      }
      messages.push({ role: 'assistant', content });
    }
    const last = rig.upstream.log.at(-1)!;
    const longest = last.promptIds.length + last.completionIds.length;
    expect(longest).toBeGreaterThan(32_000);
    const stored = rig.store.calls.storedBytes(rollout.id);
    const ratio = stored / (longest * 4);
    console.log(
      `storage: ${stored} bytes for a rollout whose longest call has ` +
        `${longest} tokens (${longest * 4} bytes as int32): ${ratio.toFixed(2)}×`,
    );
    expect(ratio).toBeLessThan(3);

    // And nothing is lost by storing references: every call rebuilds exactly.
    const trace = rolloutTrace(rig.store, rollout.id);
    trace.calls.forEach((call, i) => {
      expect(call.prompt_token_ids).toEqual(rig.upstream.log[i].promptIds);
      expect(call.request.messages).toEqual(rig.upstream.log[i].request.messages);
    });
  });
});
