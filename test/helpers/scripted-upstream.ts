import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A vLLM-format upstream with an exact byte-level tokenizer and a ChatML-style template, so that every token id
 * and logprob the gateway should record is known. Its behaviour per request can be scripted (errors, garbage,
 * a dropped stream, a hang), and it logs everything it produced.
 */
export const IM_START = 256;
export const IM_END = 257;

export type Behaviour =
  | 'ok'
  | 'garbage'
  | 'drop-mid-stream'
  | 'hang'
  | 'not-sse'
  | { status: number; body?: string; retryAfter?: number };

export interface ScriptedOptions {
  /** Chooses the behaviour of request `index` (0-based, over all requests). */
  script?: (index: number, body: Record<string, unknown>) => Behaviour;
  /** The assistant's answer for a request (text, or text and tool calls); default `reply <index>`. */
  reply?: (index: number, body: Record<string, unknown>) => string | Reply;
  tokensPerChunk?: number;
  /** Pause before the final chunk of a stream. */
  lastChunkDelayMs?: number;
  chunkDelayMs?: number;
  /** Prompt ids to report instead of tokenizing, or a function of the request's index (for benchmarks). */
  fixedPromptIds?: number[] | ((index: number) => number[]);
  /**
   * Words the model samples as one token each (ids 258 on, as `writeByteTokenizer` numbers them); prompts spell them in
   * bytes.
   */
  merged?: string[];
  /** Render earlier answers without their `<think>…</think>` span, as Qwen3's chat template does. */
  stripThinking?: boolean;
}

/**
 * An answer with tool calls, sampled as Hermes-style `<tool_call>` text after the answer's text (as Qwen models write
 * them).
 */
export interface Reply {
  text?: string;
  toolCalls?: { name: string; arguments: string }[];
}

export const renderToolCall = (c: { name: string; arguments: string }): string =>
  `<tool_call>\n{"name": ${JSON.stringify(c.name)}, "arguments": ${c.arguments}}\n</tool_call>`;

export interface Produced {
  index: number;
  path: string;
  request: Record<string, unknown>;
  authorization: string | null;
  promptIds: number[];
  completionIds: number[];
  logprobs: number[];
  toolCalls: { id: string; name: string; arguments: string }[];
  lastChunkAt: number | null;
}

export interface ScriptedUpstream {
  url: string;
  log: Produced[];
  close(): Promise<void>;
}

const enc = new TextEncoder();
const bytes = (s: string): number[] => Array.from(enc.encode(s));

type ChatMessage = { role: string; content: unknown; tool_calls?: { function: { name: string; arguments: string } }[] };

export function renderChat(messages: ChatMessage[], stripThinking = false): number[] {
  const ids: number[] = [];
  for (const m of messages) {
    let content =
      typeof m.content === 'string' ? m.content : m.content === null && m.tool_calls ? '' : JSON.stringify(m.content);
    for (const c of m.tool_calls ?? []) content += renderToolCall(c.function);
    if (stripThinking && m.role === 'assistant') content = content.replace(/<think>[\s\S]*?<\/think>\s*/g, '');
    ids.push(IM_START, ...bytes(`${m.role}\n${content}`), IM_END, ...bytes('\n'));
  }
  ids.push(IM_START, ...bytes('assistant\n'));
  return ids;
}

/** Bytes, except that each of the `merged` words is one token. */
function sample(text: string, merged: string[]): number[] {
  if (merged.length === 0) return bytes(text);
  const pattern = new RegExp(
    `(${[...merged]
      .sort((a, b) => b.length - a.length)
      .map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('|')})`,
  );
  return text.split(pattern).flatMap((part, i) => (i % 2 === 1 ? [258 + merged.indexOf(part)] : bytes(part)));
}

// Exactly representable in float32, as vLLM's logprobs are.
export const logprobOf = (id: number, pos: number): number => Math.fround(-(((id * 31 + pos * 17) % 997) + 1) / 1000);

export async function startScriptedUpstream(options: ScriptedOptions = {}): Promise<ScriptedUpstream> {
  const log: Produced[] = [];
  const hung = new Set<ServerResponse>();
  let count = 0;
  const server: Server = createServer(async (req, res) => {
    if (req.method === 'GET' && req.url === '/v1/models')
      return json(res, 200, { object: 'list', data: [{ id: 'scripted-model', object: 'model' }] });
    const body = JSON.parse(await readAll(req)) as Record<string, unknown>;
    // vLLM's tokenizer route (at the root, not under /v1): the chat template's ids for the messages.
    if (req.url === '/tokenize')
      return json(res, 200, { count: renderChat(body.messages as ChatMessage[]).length, max_model_len: 4096 });
    const index = count++;
    const behaviour = options.script?.(index, body) ?? 'ok';
    if (typeof behaviour === 'object') {
      const text = behaviour.body ?? JSON.stringify({ error: { message: `scripted ${behaviour.status}` } });
      res.writeHead(behaviour.status, {
        'content-type': 'application/json',
        ...(behaviour.retryAfter !== undefined && { 'retry-after': String(behaviour.retryAfter) }),
      });
      return void res.end(text);
    }
    if (behaviour === 'hang') return void hung.add(res);
    if (behaviour === 'garbage') {
      res.writeHead(200, { 'content-type': body.stream ? 'text/event-stream' : 'application/json' });
      return void res.end(body.stream ? 'data: {not json\n\n' : '<html>bad gateway</html>');
    }
    const chat = req.url === '/v1/chat/completions';
    const fixed = options.fixedPromptIds;
    const promptIds =
      (typeof fixed === 'function' ? fixed(index) : fixed) ??
      (chat ? renderChat(body.messages as ChatMessage[], options.stripThinking) : bytes(String(body.prompt)));
    const answer = options.reply?.(index, body) ?? `reply ${index}`;
    const { text = '', toolCalls = [] } = typeof answer === 'string' ? { text: answer } : answer;
    const calls = toolCalls.map((c, i) => ({ id: `chatcmpl-tool-${index}-${i}`, ...c }));
    const completionIds = [
      ...sample(text, options.merged ?? []),
      ...calls.flatMap((c) => bytes(renderToolCall(c))),
      IM_END,
    ];
    const logprobs = completionIds.map((id, pos) => logprobOf(id, pos));
    const produced: Produced = {
      index,
      path: req.url ?? '',
      request: body,
      authorization: req.headers.authorization ?? null,
      promptIds,
      completionIds,
      logprobs,
      toolCalls: calls,
      lastChunkAt: null,
    };
    log.push(produced);
    if (behaviour === 'not-sse' || !body.stream) return json(res, 200, whole(chat, body, produced, text));
    await stream(res, chat, body, produced, options, behaviour === 'drop-mid-stream');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    log,
    close: async () => {
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Like vLLM, token ids only when `return_token_ids` is set and logprobs only when asked for. */
function asked(body: Record<string, unknown>, answer: Record<string, unknown>): Record<string, unknown> {
  if (body.return_token_ids && body.logprobs !== undefined && body.logprobs !== false) return answer;
  const json = JSON.stringify(answer, (key, value) => {
    if (!body.return_token_ids && (key === 'prompt_token_ids' || key === 'token_ids')) return undefined;
    if ((body.logprobs === undefined || body.logprobs === false) && key === 'logprobs') return undefined;
    return value;
  });
  return JSON.parse(json);
}

function whole(chat: boolean, body: Record<string, unknown>, p: Produced, text: string): Record<string, unknown> {
  return asked(body, wholeAnswer(chat, body, p, text));
}

function wholeAnswer(chat: boolean, body: Record<string, unknown>, p: Produced, text: string): Record<string, unknown> {
  const usage = {
    prompt_tokens: p.promptIds.length,
    completion_tokens: p.completionIds.length,
    total_tokens: p.promptIds.length + p.completionIds.length,
  };
  if (chat) {
    return {
      id: `chatcmpl-${p.index}`,
      object: 'chat.completion',
      created: 1,
      model: body.model,
      prompt_token_ids: p.promptIds,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: p.toolCalls.length && !text ? null : text,
            ...(p.toolCalls.length && { tool_calls: toolCallsOf(p) }),
          },
          finish_reason: p.toolCalls.length ? 'tool_calls' : 'stop',
          token_ids: p.completionIds,
          logprobs: {
            content: p.completionIds.map((id, i) => ({
              token: String(id),
              logprob: p.logprobs[i],
              bytes: [],
              top_logprobs: [],
            })),
          },
        },
      ],
      usage,
    };
  }
  return {
    id: `cmpl-${p.index}`,
    object: 'text_completion',
    created: 1,
    model: body.model,
    choices: [
      {
        index: 0,
        text,
        finish_reason: 'stop',
        prompt_token_ids: p.promptIds,
        token_ids: p.completionIds,
        logprobs: {
          token_logprobs: p.logprobs,
          tokens: p.completionIds.map(String),
          text_offset: [],
          top_logprobs: [],
        },
      },
    ],
    usage,
  };
}

async function stream(
  res: ServerResponse,
  chat: boolean,
  body: Record<string, unknown>,
  p: Produced,
  o: ScriptedOptions,
  drop: boolean,
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const head = {
    id: `${chat ? 'chatcmpl' : 'cmpl'}-${p.index}`,
    object: chat ? 'chat.completion.chunk' : 'text_completion',
    created: 1,
    model: body.model,
  };
  const send = (obj: Record<string, unknown>): boolean => res.write(`data: ${JSON.stringify(asked(body, obj))}\n\n`);
  const choice = (
    text: string,
    ids: number[] | undefined,
    lps: number[] | undefined,
    finish: string | null,
    first = false,
  ): Record<string, unknown> =>
    chat
      ? {
          index: 0,
          delta: first ? { role: 'assistant', content: text } : { content: text },
          finish_reason: finish,
          ...(ids && { token_ids: ids }),
          logprobs: lps
            ? { content: lps.map((lp, i) => ({ token: String(ids![i]), logprob: lp, bytes: [], top_logprobs: [] })) }
            : null,
        }
      : {
          index: 0,
          text,
          finish_reason: finish,
          ...(first && { prompt_token_ids: p.promptIds }),
          ...(ids && { token_ids: ids }),
          logprobs: lps ? { token_logprobs: lps, tokens: ids!.map(String) } : null,
        };
  send({
    ...head,
    ...(chat && { prompt_token_ids: p.promptIds }),
    choices: [choice('', chat ? undefined : [], chat ? undefined : [], null, true)],
  });
  const usage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage
    ? {
        ...head,
        choices: [],
        usage: {
          prompt_tokens: p.promptIds.length,
          completion_tokens: p.completionIds.length,
          total_tokens: p.promptIds.length + p.completionIds.length,
        },
      }
    : null;
  if (p.toolCalls.length) {
    await streamToolCalls(send, head, p);
    if (usage) send(usage);
    return void res.end('data: [DONE]\n\n');
  }
  const step = o.tokensPerChunk ?? 4;
  const dec = new TextDecoder();
  for (let i = 0; i < p.completionIds.length; i += step) {
    const last = i + step >= p.completionIds.length;
    if (drop && i >= step) {
      // Let what was sent reach the gateway, then cut the connection.
      await new Promise((r) => setTimeout(r, 50));
      return void res.destroy();
    }
    const wait = last ? o.lastChunkDelayMs : o.chunkDelayMs;
    if (wait) await new Promise((r) => setTimeout(r, wait));
    const ids = p.completionIds.slice(i, i + step);
    const text = dec.decode(
      new Uint8Array(ids.flatMap((id) => (id < 256 ? [id] : id >= 258 ? bytes(o.merged![id - 258]) : []))),
      { stream: !last },
    );
    if (last) p.lastChunkAt = Date.now();
    send({ ...head, choices: [choice(text, ids, p.logprobs.slice(i, i + step), last ? 'stop' : null)] });
  }
  if (usage) send(usage);
  res.end('data: [DONE]\n\n');
}

const toolCallsOf = (p: Produced): Record<string, unknown>[] =>
  p.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));

/**
 * An answer with tool calls as vLLM's tool parser streams it: the text, then each call's header and its arguments in
 * two pieces.
 */
async function streamToolCalls(
  send: (o: Record<string, unknown>) => boolean,
  head: Record<string, unknown>,
  p: Produced,
): Promise<void> {
  let at = 0;
  const chunk = (delta: Record<string, unknown>, n: number, finish: string | null = null): void => {
    const ids = p.completionIds.slice(at, at + n);
    send({
      ...head,
      choices: [
        {
          index: 0,
          delta,
          finish_reason: finish,
          token_ids: ids,
          logprobs: {
            content: ids.map((id, i) => ({
              token: String(id),
              logprob: p.logprobs[at + i],
              bytes: [],
              top_logprobs: [],
            })),
          },
        },
      ],
    });
    at += n;
  };
  const text = p.completionIds.length - 1 - p.toolCalls.reduce((n, c) => n + bytes(renderToolCall(c)).length, 0);
  if (text > 0) chunk({ content: new TextDecoder().decode(new Uint8Array(p.completionIds.slice(0, text))) }, text);
  for (const [i, c] of p.toolCalls.entries()) {
    const n = bytes(renderToolCall(c)).length;
    const half = Math.floor(c.arguments.length / 2);
    chunk({ tool_calls: [{ index: i, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] }, n - 2);
    chunk({ tool_calls: [{ index: i, function: { arguments: c.arguments.slice(0, half) } }] }, 1);
    chunk({ tool_calls: [{ index: i, function: { arguments: c.arguments.slice(half) } }] }, 1);
  }
  chunk({}, 1, 'tool_calls');
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readAll(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req as AsyncIterable<Buffer>) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
}
