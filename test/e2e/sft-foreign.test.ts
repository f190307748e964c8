import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { type Gateway, startGateway } from '../../src/gateway/server.js';
import { readSafetensors } from '../../src/samples/safetensors.js';
import { envPython, PYTHON_DIR } from '../../src/setup/python-env.js';
import { Store } from '../../src/store/store.js';
import { alight, FIXTURES } from '../helpers/cli.js';
import { ADMIN_KEY, tempDir } from '../helpers/gateway.js';

type Obj = Record<string, unknown>;

// Foreign traces end to end: two agent loops recorded through the gateway against a stand-in for hosted APIs (none is
// reachable here), streamed, with what a hosted model hides or signs: Claude's thinking with its signature, redacted
// thinking and a tool call; a Responses reasoning item with encrypted content and a function call. `samples curate
// --render` turns them into a student's training rows with its chat template; no signature or encrypted blob may reach
// the training text.
const sse = (type: string, data: Obj): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
const SECRETS = ['SIGNATURE-SECRET', 'REDACTED-BLOB', 'ENCRYPTED-BLOB'];

function anthropicTurn(first: boolean): string {
  const start = { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-hosted', content: [], usage: {} };
  const blocks = first
    ? [
        sse('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
        sse('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'read it first' } }),
        sse('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: SECRETS[0] } }),
        sse('content_block_stop', { index: 0 }),
        sse('content_block_start', { index: 1, content_block: { type: 'redacted_thinking', data: SECRETS[1] } }),
        sse('content_block_stop', { index: 1 }),
        sse('content_block_start', {
          index: 2,
          content_block: { type: 'tool_use', id: 'tu1', name: 'read', input: {} },
        }),
        sse('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '{"path": "a"}' } }),
        sse('content_block_stop', { index: 2 }),
      ]
    : [
        sse('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
        sse('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'it says hi' } }),
        sse('content_block_stop', { index: 0 }),
      ];
  const stop = first ? 'tool_use' : 'end_turn';
  return [
    sse('message_start', { message: start }),
    ...blocks,
    sse('message_delta', { delta: { stop_reason: stop }, usage: { output_tokens: 5 } }),
    sse('message_stop', {}),
  ].join('');
}

function responsesTurn(first: boolean): string {
  const output = first
    ? [
        {
          type: 'reasoning',
          id: 'rs1',
          summary: [{ type: 'summary_text', text: 'add them' }],
          encrypted_content: SECRETS[2],
        },
        {
          type: 'function_call',
          id: 'fc1',
          call_id: 'call1',
          name: 'add',
          arguments: '{"a": 2, "b": 3}',
          status: 'completed',
        },
      ]
    : [
        {
          type: 'message',
          id: 'm1',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'five', annotations: [] }],
        },
      ];
  const response = {
    id: 'resp_1',
    object: 'response',
    created_at: 1,
    status: 'completed',
    model: 'gpt-hosted',
    output,
  };
  return [
    sse('response.created', { sequence_number: 0, response: { ...response, status: 'in_progress', output: [] } }),
    sse('response.completed', { sequence_number: 1, response }),
  ].join('');
}

let hosted: Server;
let gateway: Gateway;
let dir: string;
let store: Store;
let student: string;

beforeAll(async () => {
  hosted = createServer(async (req, res) => {
    let text = '';
    for await (const c of req) text += c;
    const body = JSON.parse(text) as Obj;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (req.url === '/v1/messages') res.end(anthropicTurn((body.messages as unknown[]).length === 1));
    else res.end(responsesTurn((body.input as unknown[]).length === 1));
  });
  await new Promise<void>((r) => hosted.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(hosted.address() as AddressInfo).port}/v1`;
  dir = tempDir();
  store = Store.open(join(dir, '.alight', 'alight.db'));
  const config = configSchema.parse({ upstream: { url, kind: 'openai-compatible', nativeProtocols: true } });
  gateway = await startGateway({ store, gateway: config.gateway, upstream: config.upstream, adminKey: ADMIN_KEY });
  await claudeLoop();
  await responsesLoop();
  await gateway.close();
  store.close();
  // The student: the tiny model's character tokenizer with a ChatML template that writes tool calls and reasoning.
  student = join(dir, 'student');
  const template = readFileSync(join(FIXTURES, 'chat-templates', 'chatml-think.jinja'), 'utf8');
  execFileSync(
    envPython(),
    [
      '-c',
      'import sys; from alight_worker.tiny import make_tokenizer; t = make_tokenizer(); t.chat_template = sys.argv[2]; ' +
        't.save_pretrained(sys.argv[1])',
      student,
      template,
    ],
    { cwd: PYTHON_DIR },
  );
}, 120_000);

afterAll(() => hosted?.close());

/** A rollout of the recorded run, ended with a reward as a harness would. */
function rollout(): { token: string; end: () => void } {
  const { rollout: r, token } = gateway.rollouts.create({ run: 'hosted', taskId: `t-${Math.random()}` });
  gateway.rollouts.transition(r.id, 'running');
  return {
    token,
    end: () => {
      gateway.rollouts.transition(r.id, 'succeeded', { exitCode: 0 });
      store.addReward(r.id, 1, null, 'harness');
    },
  };
}

async function claudeLoop(): Promise<void> {
  const { token, end } = rollout();
  const client = new Anthropic({ baseURL: `${gateway.url}/r/${token}`, apiKey: token, maxRetries: 0 });
  const tools = [
    { name: 'read', description: 'read a file', input_schema: { type: 'object' as const, properties: {} } },
  ];
  // The teacher's privileged hint, which the student must not be trained to need (--strip).
  const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'what is in a HINT: it says hi' }];
  const ask = {
    model: 'claude-hosted',
    max_tokens: 100,
    tools,
    thinking: { type: 'enabled' as const, budget_tokens: 64 },
  };
  const first = await client.messages.stream({ ...ask, messages }).finalMessage();
  messages.push(
    { role: 'assistant', content: first.content },
    {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'tu1', content: 'hi' }],
    },
  );
  await client.messages.stream({ ...ask, messages }).finalMessage();
  end();
}

async function responsesLoop(): Promise<void> {
  const { token, end } = rollout();
  const client = new OpenAI({ baseURL: `${gateway.url}/r/${token}/v1`, apiKey: token, maxRetries: 0 });
  const tools = [{ type: 'function' as const, name: 'add', parameters: { type: 'object' }, strict: false }];
  const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: 'add 2 and 3' }];
  const first = await client.responses
    .stream({ model: 'gpt-hosted', input, tools, include: ['reasoning.encrypted_content'] })
    .finalResponse();
  input.push(...(first.output as OpenAI.Responses.ResponseInputItem[]), {
    type: 'function_call_output',
    call_id: 'call1',
    output: '5',
  });
  await client.responses.stream({ model: 'gpt-hosted', input, tools }).finalResponse();
  end();
}

/** The characters of a curated file's rows, by the character tokenizer's vocabulary; and its loss-masked ones. */
function decoded(file: string): { text: string; learned: string } {
  const vocab = JSON.parse(readFileSync(join(student, 'tokenizer.json'), 'utf8')).model.vocab as Record<string, number>;
  const char = new Map(Object.entries(vocab).map(([c, i]) => [i, c]));
  const { tensors } = readSafetensors(file);
  const ids = tensors.input_ids as Int32Array;
  const mask = tensors.loss_mask as Uint8Array;
  const at = (keep: (i: number) => boolean) => Array.from(ids, (id, i) => (keep(i) ? char.get(id) : '')).join('');
  return { text: at(() => true), learned: at((i) => mask[i] === 1) };
}

/** `samples curate` of every recorded rollout, rendered for the student, with these flags besides. */
const rendered = (args: string[]) =>
  alight(['samples', 'curate', '--run', 'hosted', '--select', 'all', '--render', student, ...args], {
    cwd: dir,
    timeoutMs: 120_000,
  });

describe('alight samples curate --render: foreign traces for a student', () => {
  it("renders recorded Claude and Responses streams with the student's template, no signature or blob in it", async () => {
    const res = await rendered(['--jsonl', '--out', 'data', '--json']);
    expect(res.code, res.stderr).toBe(0);
    const result = JSON.parse(res.stdout);
    expect(result.train.examples).toBe(2);
    // Both loops' signatures and blobs, counted; the thinking and summaries left out without --keep-thinking.
    expect(result.redacted).toMatchObject({ signature: 1, redacted_thinking: 1, encrypted_reasoning: 1, thinking: 2 });
    const { text, learned } = decoded(join(dir, 'data', 'train.safetensors'));
    for (const secret of SECRETS) expect(text).not.toContain(secret);
    expect(learned).toContain('<tool_call>{"name": "read", "arguments": {"path": "a"}}</tool_call>');
    expect(learned).toContain('<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>');
    expect(learned).toContain('it says hi');
    expect(learned).toContain('five');
    // What the user and the tools said is in the rows, not in the loss.
    expect(text).toContain('what is in a');
    expect(learned).not.toContain('what is in a');
    expect(learned).not.toContain('add 2 and 3');
    expect(text).not.toContain('read it first');
    // The same two conversations as chat JSONL for other trainers: arguments as objects, nothing signed or sealed.
    const jsonl = readFileSync(join(dir, 'data', 'train.jsonl'), 'utf8');
    for (const secret of SECRETS) expect(jsonl).not.toContain(secret);
    const lines = jsonl
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.messages.at(-1).content).sort()).toEqual(['five', 'it says hi']);
    expect(lines.flatMap((l) => l.messages.flatMap((m: Obj) => m.tool_calls ?? []))).toEqual(
      expect.arrayContaining([{ id: 'call1', name: 'add', arguments: { a: 2, b: 3 } }]),
    );
  }, 180_000);

  it('keeps the reasoning text, never its signature, with --keep-thinking', async () => {
    const res = await rendered(['--keep-thinking', '--out', 'think', '--json']);
    expect(res.code, res.stderr).toBe(0);
    const { text, learned } = decoded(join(dir, 'think', 'train.safetensors'));
    expect(learned).toContain('<think>read it first</think>');
    expect(learned).toContain('<think>add them</think>');
    for (const secret of SECRETS) expect(text).not.toContain(secret);
    expect(text).toContain('HINT: it says hi');
  }, 180_000);

  it("leaves a teacher's privileged hint out of the student's prompt with --strip", async () => {
    const res = await rendered(['--strip', ' HINT: [a-z ]+', '--out', 'strip', '--json']);
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout).redacted.stripped).toBe(1);
    const { text } = decoded(join(dir, 'strip', 'train.safetensors'));
    expect(text).not.toContain('HINT');
    expect(text).toContain('what is in a<|im_end|>');
    // A teacher that repeats the hint in its answer would teach the student to write it: that rollout is left out.
    const echoed = await rendered(['--strip', 'says hi', '--dry-run', '--json']);
    expect(echoed.code, echoed.stderr).toBe(0);
    expect(JSON.parse(echoed.stdout)).toMatchObject({ dropped: { unrenderable: 1 }, train: { examples: 1 } });
  }, 180_000);

  it('refuses --keep-thinking without --render, and a folder without a tokenizer', async () => {
    const flag = await alight(['samples', 'curate', '--run', 'hosted', '--keep-thinking', '--dry-run'], { cwd: dir });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/--keep-thinking and --strip apply to --render/);
    const folder = await alight(['samples', 'curate', '--run', 'hosted', '--render', dir, '--dry-run'], { cwd: dir });
    expect(folder.code).toBe(3);
    expect(folder.stderr).toMatch(/no Hugging Face tokenizer there/);
  }, 60_000);
});
