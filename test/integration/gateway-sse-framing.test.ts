import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { rolloutTrace } from '../../src/traces/export.js';
import { rawGateways } from '../helpers/raw-upstream.js';

// Event streams framed in ways the SSE spec allows but no known engine writes: the gateway must read them as the
// openai SDK reading the engine directly does, and record what that reading gives.
type Obj = Record<string, unknown>;

const gateways = rawGateways();

const chunk = (k: number, content: string, finish: string | null = null): string =>
  JSON.stringify({
    id: 'c',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    ...(k === 0 && { prompt_token_ids: [1, 2, 3] }),
    choices: [
      {
        index: 0,
        delta: { content },
        logprobs: { content: [{ token: content, logprob: -0.5 * (k + 1), bytes: [], top_logprobs: [] }] },
        finish_reason: finish,
        token_ids: [10 + k],
      },
    ],
  });
const [hel, lo] = [chunk(0, 'Hel'), chunk(1, 'lo', 'stop')];

/** Streams, each as the engine would write it, cut into reads where `|` stands. */
const framings: [string, string][] = [
  ['CR-only line ends', `data: ${hel}\r\r|data: ${lo}\r|\rdata: [DONE]\r|\r`],
  ['lines ended every way', `data: ${hel}\r\n\n|data: ${lo}\n\r|\ndata: [DONE]\r\n\r\n`],
  ['`data: [DONE]\\r` then a blank line', `data: ${hel}\n\ndata: ${lo}\n\ndata: [DONE]\r\n\n`],
  ['`data: [DONE]\\r` at the end', `data: ${hel}\n\ndata: ${lo}\n\ndata: [DONE]\r`],
  ['`data: [DONE] `', `data: ${hel}\n\ndata: ${lo}\n\ndata: [DONE] \n\n`],
  ['an event after [DONE]', `data: ${hel}\n\ndata: ${lo}\n\ndata: [DONE]\n\ndata: ${chunk(2, ' more')}\n\n`],
  ['[DONE] with no blank line', `data: ${hel}\n\ndata: ${lo}\n\ndata: [DONE]`],
  ['a `data` line without a colon', `data\ndata: ${hel}\n\n: note\rdata: ${lo}\n\ndata: [DONE]\n\n`],
];

async function read(client: OpenAI): Promise<string[]> {
  const out: string[] = [];
  const stream = await client.chat.completions.create({ model: 'm', messages: [], stream: true });
  for await (const c of stream) out.push(`${c.choices[0]?.delta?.content}|${c.choices[0]?.finish_reason}`);
  return out;
}

describe('SSE framings the spec allows', () => {
  it.each(framings)('are read as the openai SDK reads them: %s', async (_name, wire) => {
    const { up, rig } = await gateways.start(() => ({ body: wire.split('|') }));
    const direct = await read(new OpenAI({ baseURL: up.url, apiKey: 'k', maxRetries: 0 }));
    expect(direct).toEqual(['Hel|null', 'lo|stop']);
    const { rollout, token } = rig.gateway.rollouts.create({ run: 'r' });
    const base = `${rig.gateway.url}/r/${token}/v1`;
    expect(await read(new OpenAI({ baseURL: base, apiKey: token, maxRetries: 0 }))).toEqual(direct);
    const [call] = rolloutTrace(rig.store, rollout.id).calls;
    expect(call).toMatchObject({
      status: 'ok',
      prompt_token_ids: [1, 2, 3],
      completion_token_ids: [10, 11],
      completion_logprobs: [-0.5, -1],
      response: { choices: [{ message: { content: 'Hello' } }] },
    });
  });

  it('leaves out a last event with no blank line after it, as the SDK does, and records the answer unfinished', async () => {
    const { up, rig } = await gateways.start(() => ({ body: `data: ${hel}\n\ndata: ${lo}\n` }), { retries: 0 });
    expect(await read(new OpenAI({ baseURL: up.url, apiKey: 'k', maxRetries: 0 }))).toEqual(['Hel|null']);
    const { rollout, token } = rig.gateway.rollouts.create({ run: 'r' });
    const client = new OpenAI({ baseURL: `${rig.gateway.url}/r/${token}/v1`, apiKey: token, maxRetries: 0 });
    await expect(read(client)).rejects.toThrow(/before the answer was finished/);
    const [call] = rolloutTrace(rig.store, rollout.id).calls;
    expect(call).toMatchObject({ status: 'error', completion_token_ids: [10] } as Obj);
  });
});
