import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { type Gateway, startGateway } from '../../src/gateway/server.js';
import { Store } from '../../src/store/store.js';
import { rolloutTrace } from '../../src/traces/export.js';
import { ADMIN_KEY, tempDir } from '../helpers/gateway.js';

type Obj = Record<string, unknown>;

// A stand-in for a hosted API that serves Messages and Responses itself (none can be reached from here): fixed
// answers in each protocol's own shape, and a log of what arrived.
const message = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-hosted',
  content: [{ type: 'text', text: 'hosted hi' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 9, output_tokens: 2 },
};
const response = {
  id: 'resp_1',
  object: 'response',
  created_at: 1,
  status: 'completed',
  model: 'gpt-hosted',
  output: [
    {
      type: 'message',
      id: 'm1',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'hosted hi', annotations: [] }],
    },
  ],
  usage: { input_tokens: 9, output_tokens: 2, total_tokens: 11 },
};
const sse = (type: string, data: Obj): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
const messageEvents = [
  sse('message_start', { message: { ...message, content: [], stop_reason: null } }),
  sse('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  sse('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'hosted hi' } }),
  sse('content_block_stop', { index: 0 }),
  sse('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 2 } }),
  sse('message_stop', {}),
];
const responseEvents = [
  sse('response.created', { sequence_number: 0, response: { ...response, status: 'in_progress', output: [] } }),
  sse('response.output_item.added', {
    sequence_number: 1,
    output_index: 0,
    item: { ...response.output[0], status: 'in_progress', content: [] },
  }),
  sse('response.content_part.added', {
    sequence_number: 2,
    item_id: 'm1',
    output_index: 0,
    content_index: 0,
    part: { type: 'output_text', text: '', annotations: [] },
  }),
  sse('response.output_text.delta', {
    sequence_number: 3,
    item_id: 'm1',
    output_index: 0,
    content_index: 0,
    delta: 'hosted hi',
  }),
  sse('response.completed', { sequence_number: 4, response }),
];

interface Hosted {
  url: string;
  log: { path: string; body: Obj }[];
  server: Server;
}

async function hosted(): Promise<Hosted> {
  const log: Hosted['log'] = [];
  const server = createServer(async (req, res) => {
    let text = '';
    for await (const c of req) text += c;
    const body = JSON.parse(text) as Obj;
    log.push({ path: req.url ?? '', body });
    if (req.url === '/v1/messages/count_tokens')
      return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"input_tokens":42}');
    const anthropic = req.url === '/v1/messages';
    if (body.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return void res.end((anthropic ? messageEvents : responseEvents).join(''));
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(anthropic ? message : response));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, log, server };
}

let up: Hosted;
let gateway: Gateway;
let store: Store;
afterEach(async () => {
  await gateway?.close();
  store?.close();
  up?.server.close();
});

describe('upstream.nativeProtocols: Messages and Responses relayed to an upstream that serves them', () => {
  it("sends the harness's requests on unchanged and records its requests and answers, whole and streamed", async () => {
    up = await hosted();
    store = Store.open(join(tempDir(), 'alight.db'));
    const config = configSchema.parse({ upstream: { url: up.url, kind: 'openai-compatible', nativeProtocols: true } });
    gateway = await startGateway({ store, gateway: config.gateway, upstream: config.upstream, adminKey: ADMIN_KEY });
    const { rollout, token } = gateway.rollouts.create({ run: 'r' });
    const anthropic = new Anthropic({ baseURL: `${gateway.url}/r/${token}`, apiKey: token, maxRetries: 0 });
    const openai = new OpenAI({ baseURL: `${gateway.url}/r/${token}/v1`, apiKey: token, maxRetries: 0 });
    const ask = {
      model: 'claude-hosted',
      max_tokens: 10,
      messages: [{ role: 'user' as const, content: 'hi' }],
      tools: [{ type: 'web_search_20250305' as const, name: 'web_search' as const }],
    };
    expect(await anthropic.messages.create(ask)).toEqual(message);
    expect((await anthropic.messages.stream(ask).finalMessage()).content).toEqual(message.content);
    expect(
      (await openai.responses.create({ model: 'gpt-hosted', input: 'hi', tools: [{ type: 'web_search' }] }))
        .output_text,
    ).toBe('hosted hi');
    expect((await openai.responses.stream({ model: 'gpt-hosted', input: 'hi' }).finalResponse()).output_text).toBe(
      'hosted hi',
    );

    expect(await anthropic.messages.countTokens({ model: 'claude-hosted', messages: ask.messages })).toEqual({
      input_tokens: 42,
    });

    // Hosted tools (web search) reach the upstream that runs them; nothing was translated.
    expect(up.log.map((l) => l.path)).toEqual([
      '/v1/messages',
      '/v1/messages',
      '/v1/responses',
      '/v1/responses',
      '/v1/messages/count_tokens',
    ]);
    expect(up.log[0].body).toEqual(ask);
    const calls = rolloutTrace(store, rollout.id).calls;
    expect(calls.map((c) => [c.protocol, c.stream, c.status, c.harness])).toEqual([
      ['anthropic.messages', false, 'ok', null],
      ['anthropic.messages', true, 'ok', null],
      ['openai.responses', false, 'ok', null],
      ['openai.responses', true, 'ok', null],
    ]);
    expect(calls[1]).toMatchObject({
      request: ask,
      response: { content: [{ type: 'text', text: 'hosted hi' }], stop_reason: 'end_turn' },
      finish_reason: 'end_turn',
      prompt_token_ids: null,
    });
    expect(calls[3]).toMatchObject({ response: response, finish_reason: 'completed' });
  });
});
