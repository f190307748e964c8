import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { envPython } from '../../src/setup/python-env.js';
import { rolloutTrace } from '../../src/traces/export.js';
import { FIXTURES } from '../helpers/cli.js';
import { startRig } from '../helpers/gateway.js';
import { rawGateways, sseOf } from '../helpers/raw-upstream.js';

// Translated streams read whole by the clients harnesses use: the openai SDKs' Responses stream helpers and raw event
// iteration on a reasoning model's answers (vLLM's own chunk shapes), the anthropic SDK on tool arguments a model got
// wrong.
type Obj = Record<string, unknown>;

const gateways = rawGateways();

/** Where vLLM's reasoning parsers put the thinking: Qwen3's older field, the newer one, or both (the renaming's). */
const fields = [['reasoning_content'], ['reasoning'], ['reasoning', 'reasoning_content']];
const THINK_END = 151668;
const IM_END = 151645;

/** One turn as vLLM 0.32 streams it with a reasoning parser, token ids and logprobs on. */
function reasoningTurn(turn: number, names: string[]) {
  const pieces = [...['Let', ' me', ' think'].map((t) => ({ reasoning: t })), null, { content: `Answer ${turn}` }];
  const ids = pieces.map((_, k) => (k === 3 ? THINK_END : 1000 + 10 * turn + k)).concat(IM_END);
  const logprobs = ids.map((_, k) => Math.fround(-(k + 1) / 8));
  const head = { id: `chatcmpl-${turn}`, object: 'chat.completion.chunk', created: 1, model: 'qwen3' };
  const lp = (k: number) => ({ content: [{ token: 't', logprob: logprobs[k], bytes: [116], top_logprobs: [] }] });
  const delta = (p: Obj | null): Obj =>
    p && 'reasoning' in p ? Object.fromEntries(names.map((n) => [n, p.reasoning])) : (p ?? {});
  const chunks: Obj[] = [
    {
      ...head,
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }],
      prompt_token_ids: [1, 2, turn + 3],
    },
    ...pieces.map((p, k) => ({
      ...head,
      choices: [{ index: 0, delta: delta(p), logprobs: lp(k), finish_reason: null, token_ids: [ids[k]] }],
    })),
    {
      ...head,
      choices: [
        { index: 0, delta: {}, logprobs: lp(5), finish_reason: 'stop', stop_reason: null, token_ids: [IM_END] },
      ],
    },
    { ...head, choices: [], usage: { prompt_tokens: 3, total_tokens: 9, completion_tokens: 6 } },
  ];
  return { chunks, ids, logprobs, reasoning: 'Let me think', content: `Answer ${turn}` };
}

async function reasoningGateway(names: string[]) {
  const { rig } = await gateways.start((_body, i) => ({ body: sseOf(reasoningTurn(i, names).chunks) }));
  const { rollout, token } = rig.gateway.rollouts.create({ run: 'r' });
  const base = `${rig.gateway.url}/r/${token}/v1`;
  return { client: new OpenAI({ baseURL: base, apiKey: token, maxRetries: 0 }), base, token, id: rollout.id, rig };
}

const reasoningOutput = (turn: number) => [
  { type: 'reasoning', content: [{ type: 'reasoning_text', text: 'Let me think' }] },
  { type: 'message', content: [{ type: 'output_text', text: `Answer ${turn}` }] },
];

describe('a reasoning model through the Responses translation', () => {
  it.each(fields.map((f) => [f.join(' and '), f] as const))(
    "is read whole by openai-node's stream helper and raw iteration, every turn (%s)",
    async (_name, f) => {
      const { client, id, rig } = await reasoningGateway(f);
      const first = await client.responses.stream({ model: 'qwen', input: 'hi' }).finalResponse();
      expect(first.output).toMatchObject(reasoningOutput(0));
      expect(first.output_text).toBe('Answer 0');
      const ask = { model: 'qwen', input: 'again', previous_response_id: first.id };
      const second = await client.responses.stream(ask).finalResponse();
      expect(second.output).toMatchObject(reasoningOutput(1));

      const events: OpenAI.Responses.ResponseStreamEvent[] = [];
      for await (const e of await client.responses.create({ ...ask, stream: true })) events.push(e);
      const done = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
      expect(done.type).toBe('response.completed');
      expect(done.response.output).toMatchObject(reasoningOutput(2));
      const text = events.filter((e) => e.type === 'response.reasoning_text.delta').map((e) => e.delta);
      expect(text.join('')).toBe('Let me think');

      const calls = rolloutTrace(rig.store, id).calls;
      calls.forEach((call, turn) => {
        const want = reasoningTurn(turn, f);
        expect(call).toMatchObject({
          status: 'ok',
          completion_token_ids: want.ids,
          completion_logprobs: want.logprobs,
        });
        expect(call.response).toMatchObject({ choices: [{ message: { reasoning_content: want.reasoning } }] });
      });
    },
  );

  const python = envPython();
  const hasOpenai = existsSync(python) && spawnSync(python, ['-c', 'import openai']).status === 0;
  it.skipIf(!hasOpenai)("is read whole by the Python SDK's stream helper and raw iteration", async () => {
    const { base, token } = await reasoningGateway(['reasoning']);
    // Not spawnSync: the gateway answering it runs in this process.
    const run = await promisify(execFile)(python, [join(FIXTURES, 'responses_stream.py')], {
      env: { ...process.env, OPENAI_BASE_URL: base, OPENAI_API_KEY: token },
    });
    const { helper, iterated } = JSON.parse(run.stdout) as { helper: Obj[]; iterated: Obj[] };
    expect(helper).toMatchObject(reasoningOutput(0));
    expect(iterated).toMatchObject(reasoningOutput(1));
  });
});

describe('tool arguments that are not a JSON object, streamed to an Anthropic harness', () => {
  const readFile = {
    name: 'read_file',
    description: 'Read a file',
    input_schema: { type: 'object' as const, properties: { path: { type: 'string' } } },
  };

  it('reach the SDK as the whole answer gives them', async () => {
    const args = ['{"path": a.txt}', '{"path": "a.txt"}}', '{"path": "a.t', 'a.txt', '{"path": "a.txt"}'];
    const full = await startRig({ reply: (i) => ({ toolCalls: [{ name: 'read_file', arguments: args[i >> 1] }] }) });
    gateways.keep(full);
    const { rollout, token } = full.gateway.rollouts.create({ run: 'r' });
    const client = new Anthropic({ baseURL: `${full.gateway.url}/r/${token}`, apiKey: token, maxRetries: 0 });
    const ask = {
      model: 'claude',
      max_tokens: 50,
      tools: [readFile],
      messages: [{ role: 'user' as const, content: 'go' }],
    };
    for (const text of args) {
      const whole = await client.messages.create(ask);
      const streamed = await client.messages.stream(ask).finalMessage();
      const blocks = (m: Anthropic.Message) => m.content.map((b) => ({ ...b, id: undefined }));
      expect(blocks(streamed), text).toEqual(blocks(whole));
      const input = (whole.content[0] as Anthropic.ToolUseBlock).input;
      expect(input, text).toEqual(text === '{"path": "a.txt"}' ? { path: 'a.txt' } : { _raw: text });
    }
    expect(rolloutTrace(full.store, rollout.id).calls.every((c) => c.status === 'ok')).toBe(true);
  });
});
