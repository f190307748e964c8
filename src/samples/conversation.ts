/**
 * Foreign traces (recorded against another model or a hosted API: no token ids of the student's) as plain chat
 * messages the student's template can render: one shape for the three chat protocols, tool-call arguments as objects
 * (never a JSON string to be encoded twice), reasoning kept only when asked, and what may not reach training text
 * (reasoning signatures, redacted thinking, encrypted reasoning) dropped and counted.
 */
import { isRecord } from '../records.js';

type Obj = Record<string, unknown>;

export interface ToolCall {
  id: string;
  name: string;
  arguments: Obj;
}
export interface Message {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  reasoning_content?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
}
export interface Tool {
  type: 'function';
  function: { name: string; description?: string; parameters: Obj };
}
export interface Conversation {
  messages: Message[];
  tools: Tool[];
}

export const redactionKinds = [
  'signature',
  'redacted_thinking',
  'encrypted_reasoning',
  'thinking',
  'non_text',
] as const;
export type Redactions = Record<(typeof redactionKinds)[number], number>;
export const noRedactions = (): Redactions => Object.fromEntries(redactionKinds.map((k) => [k, 0])) as Redactions;

/** A trace that cannot become training text as recorded (arguments that are not a JSON object, an unknown item). */
export class Unrenderable extends Error {}

interface Reading {
  keepThinking: boolean;
  redacted: Redactions;
}

/** Text of a content field: a string, or the text of its parts (anything else counted and left out). */
function text(content: unknown, r: Reading): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => {
      if (isRecord(part) && typeof part.text === 'string') return part.text;
      r.redacted.non_text++;
      return '';
    })
    .join('');
}

/** Arguments as an object, whichever way the protocol carried them. */
function args(value: unknown): Obj {
  if (isRecord(value)) return value;
  if (typeof value === 'string') {
    let parsed: unknown;
    try {
      parsed = value.trim() ? JSON.parse(value) : {};
    } catch {
      throw new Unrenderable(`tool-call arguments are not JSON: ${value.slice(0, 60)}`);
    }
    if (isRecord(parsed)) return parsed;
  }
  throw new Unrenderable('tool-call arguments are not a JSON object');
}

/** Reasoning text, kept only with --keep-thinking (else counted as left out). */
function reasoning(value: string, r: Reading): string | undefined {
  if (!value) return undefined;
  if (r.keepThinking) return value;
  r.redacted.thinking++;
  return undefined;
}

function assistant(content: string, reason: string | undefined, calls: ToolCall[]): Message {
  return {
    role: 'assistant',
    content,
    ...(reason && { reasoning_content: reason }),
    ...(calls.length && { tool_calls: calls }),
  };
}

// --- OpenAI chat/completions ------------------------------------------------------------------------------------------
function chatMessage(m: Obj, r: Reading): Message {
  const role = m.role === 'developer' ? 'system' : (m.role as Message['role']);
  if (role === 'tool') return { role, content: text(m.content, r), tool_call_id: String(m.tool_call_id ?? '') };
  if (role !== 'assistant') return { role, content: text(m.content, r) };
  const calls = (Array.isArray(m.tool_calls) ? m.tool_calls : []).map((c: Obj) => {
    const fn = (c.function ?? {}) as Obj;
    return { id: String(c.id ?? ''), name: String(fn.name ?? ''), arguments: args(fn.arguments) };
  });
  return assistant(text(m.content, r), reasoning(String(m.reasoning_content ?? m.reasoning ?? ''), r), calls);
}

const chat = {
  request: (body: Obj, r: Reading): Conversation => ({
    messages: (Array.isArray(body.messages) ? body.messages : []).map((m: Obj) => chatMessage(m, r)),
    tools: (Array.isArray(body.tools) ? body.tools : []).filter(isRecord).map((t) => {
      const fn = (t.function ?? {}) as Obj;
      return tool(fn.name, fn.description, fn.parameters);
    }),
  }),
  answer: (body: Obj, r: Reading): Message[] => {
    const choice = Array.isArray(body.choices) ? (body.choices[0] as Obj | undefined) : undefined;
    return isRecord(choice?.message) ? [chatMessage({ ...choice.message, role: 'assistant' }, r)] : [];
  },
};

function tool(name: unknown, description: unknown, parameters: unknown): Tool {
  return {
    type: 'function',
    function: {
      name: String(name ?? ''),
      ...(typeof description === 'string' && { description }),
      parameters: isRecord(parameters) ? parameters : { type: 'object', properties: {} },
    },
  };
}

// --- Anthropic Messages -----------------------------------------------------------------------------------------------
/** An Anthropic message's blocks: tool results become tool messages (first), the rest one message of its role. */
function anthropicMessage(m: Obj, r: Reading): Message[] {
  const blocks: Obj[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : (m.content as Obj[]);
  const out: Message[] = [];
  let content = '';
  let thought = '';
  const calls: ToolCall[] = [];
  for (const b of Array.isArray(blocks) ? blocks : []) {
    if (b.type === 'text') content += String(b.text ?? '');
    else if (b.type === 'thinking') {
      if (b.signature) r.redacted.signature++;
      thought += String(b.thinking ?? '');
    } else if (b.type === 'redacted_thinking') r.redacted.redacted_thinking++;
    else if (b.type === 'tool_use')
      calls.push({ id: String(b.id ?? ''), name: String(b.name ?? ''), arguments: args(b.input) });
    else if (b.type === 'tool_result')
      out.push({ role: 'tool', content: text(b.content, r), tool_call_id: String(b.tool_use_id ?? '') });
    else r.redacted.non_text++;
  }
  if (m.role === 'assistant') out.push(assistant(content, reasoning(thought, r), calls));
  else if (content) out.push({ role: 'user', content });
  return out;
}

const anthropic = {
  request: (body: Obj, r: Reading): Conversation => ({
    messages: [
      ...(body.system ? [{ role: 'system' as const, content: text(body.system, r) }] : []),
      ...(Array.isArray(body.messages) ? body.messages : []).flatMap((m: Obj) => anthropicMessage(m, r)),
    ],
    // Server tools (web search and the like) have no schema the student could call: only client tools.
    tools: (Array.isArray(body.tools) ? body.tools : [])
      .filter((t: Obj) => isRecord(t) && t.input_schema)
      .map((t: Obj) => tool(t.name, t.description, t.input_schema)),
  }),
  answer: (body: Obj, r: Reading): Message[] => anthropicMessage({ ...body, role: 'assistant' }, r),
};

// --- OpenAI Responses -------------------------------------------------------------------------------------------------
/** Responses items in order; an assistant's reasoning, text and function calls in a row make one message. */
function responsesItems(items: unknown[], r: Reading): Message[] {
  const out: Message[] = [];
  let open: { content: string; thought: string; calls: ToolCall[] } | null = null;
  const close = () => {
    if (open) out.push(assistant(open.content, reasoning(open.thought, r), open.calls));
    open = null;
  };
  const turn = () => {
    open ??= { content: '', thought: '', calls: [] };
    return open;
  };
  for (const item of items.filter(isRecord)) {
    const type = item.type ?? 'message';
    if (type === 'reasoning') {
      if (item.encrypted_content) r.redacted.encrypted_reasoning++;
      const summary = Array.isArray(item.summary) ? item.summary : [];
      turn().thought += summary.map((s: Obj) => String(s.text ?? '')).join('\n');
    } else if (type === 'function_call')
      turn().calls.push({
        id: String(item.call_id ?? ''),
        name: String(item.name ?? ''),
        arguments: args(item.arguments),
      });
    else if (type === 'message' && item.role === 'assistant') turn().content += text(item.content, r);
    else if (type === 'message') {
      close();
      out.push({ role: item.role === 'user' ? 'user' : 'system', content: text(item.content, r) });
    } else if (type === 'function_call_output') {
      close();
      out.push({ role: 'tool', content: text(item.output, r), tool_call_id: String(item.call_id ?? '') });
    } else throw new Unrenderable(`a Responses item of type ${String(type)} cannot be rendered as recorded`);
  }
  close();
  return out;
}

const responses = {
  request: (body: Obj, r: Reading): Conversation => ({
    messages: [
      ...(body.instructions ? [{ role: 'system' as const, content: text(body.instructions, r) }] : []),
      ...(typeof body.input === 'string'
        ? [{ role: 'user' as const, content: body.input }]
        : responsesItems(Array.isArray(body.input) ? body.input : [], r)),
    ],
    tools: (Array.isArray(body.tools) ? body.tools : [])
      .filter((t: Obj) => isRecord(t) && t.type === 'function')
      .map((t: Obj) => tool(t.name, t.description, t.parameters)),
  }),
  answer: (body: Obj, r: Reading): Message[] => responsesItems(Array.isArray(body.output) ? body.output : [], r),
};

/** The protocols whose calls are conversations, by the name the store records. */
const readers: Record<
  string,
  { request(body: Obj, r: Reading): Conversation; answer(body: Obj, r: Reading): Message[] }
> = {
  'openai.chat': chat,
  'anthropic.messages': anthropic,
  'openai.responses': responses,
};

/** One recorded call: what the harness sent and was answered (the harness's side where the gateway translated). */
export interface RecordedCall {
  protocol: string;
  request: Obj;
  response: Obj | null;
  harness: { request: Obj; response: Obj | null } | null;
}

/**
 * A rollout's conversations: each call's messages and answer, less those that a later call continues (an agent's
 * loop is one conversation; a sub-agent's calls are another). What was left out is counted in the kept ones only.
 */
export function rolloutConversations(
  calls: readonly RecordedCall[],
  keepThinking: boolean,
  redacted: Redactions,
): Conversation[] {
  const read = calls.map((call) => {
    const reader = readers[call.protocol];
    if (!reader) throw new Unrenderable(`${call.protocol} calls are not conversations`);
    const r: Reading = { keepThinking, redacted: noRedactions() };
    const c = reader.request(call.harness?.request ?? call.request, r);
    const answer = call.harness ? call.harness.response : call.response;
    return { conversation: { ...c, messages: [...c.messages, ...(answer ? reader.answer(answer, r) : [])] }, r };
  });
  const key = (m: Message[]) => JSON.stringify(m);
  const continued = (c: Conversation, i: number) =>
    read.some(
      ({ conversation: later }, j) =>
        j > i &&
        later.messages.length > c.messages.length &&
        key(later.messages.slice(0, c.messages.length)) === key(c.messages),
    );
  const kept = read.filter(({ conversation }, i) => !continued(conversation, i));
  for (const { r } of kept) for (const k of redactionKinds) redacted[k] += r.redacted[k];
  return kept.map(({ conversation }) => conversation);
}
