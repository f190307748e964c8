import type { UpstreamKind } from '../../config/schema.js';
import { isRecord } from '../../records.js';
import type { RolloutMemory } from './types.js';

/** Shared by the protocols that the gateway translates into chat/completions for the upstream. */
type Obj = Record<string, unknown>;

/** The text of a content value: a string, or the text of its text parts in order (other parts are left out). */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((p) => isRecord(p) && typeof p.text === 'string')
    .map((p) => (p as { text: string }).text)
    .join('');
}

/**
 * A chat tool call for a call the harness names by id, with arguments as the model wrote them when the gateway
 * answered that call (so the next prompt repeats the model's own tokens, however the harness re-serialised them),
 * else as the harness gives them (JSON of its object).
 */
export function chatToolCall(id: string, name: string, input: unknown, memory: RolloutMemory): Obj {
  const args = typeof input === 'string' ? input : JSON.stringify(input ?? {});
  return { id, type: 'function', function: { name, arguments: ownArguments(id, args, memory) } };
}

/** The model's own text of call `id`'s arguments where `args` means the same (JSON-equal), else `args`. */
function ownArguments(id: string, args: string, memory: RolloutMemory): string {
  const recorded = memory.toolArguments(id);
  return recorded !== undefined && (recorded === args || sameJson(recorded, args)) ? recorded : args;
}

/**
 * A chat history with each assistant tool call's arguments as the model wrote them, where the harness sent them back
 * re-serialised (LangChain's ChatOpenAI and OpenHands parse and re-dump them: `{"a":1}` comes back `{"a": 1}`, and the
 * next prompt would no longer extend the last). The same array when nothing changes.
 */
export function withOwnArguments(messages: unknown[], memory: RolloutMemory): unknown[] {
  let changed = false;
  const out = messages.map((m) => {
    if (!isRecord(m) || m.role !== 'assistant' || !Array.isArray(m.tool_calls)) return m;
    let callsChanged = false;
    const calls = m.tool_calls.map((c: unknown) => {
      const fn = isRecord(c) ? c.function : undefined;
      if (!isRecord(c) || typeof c.id !== 'string' || !isRecord(fn) || typeof fn.arguments !== 'string') return c;
      const own = ownArguments(c.id, fn.arguments, memory);
      if (own === fn.arguments) return c;
      callsChanged = true;
      return { ...c, function: { ...fn, arguments: own } };
    });
    if (!callsChanged) return m;
    changed = true;
    return { ...m, tool_calls: calls };
  });
  return changed ? out : messages;
}

function sameJson(a: string, b: string): boolean {
  try {
    return JSON.stringify(JSON.parse(a)) === JSON.stringify(JSON.parse(b));
  } catch {
    return false;
  }
}

/**
 * The leading system messages as one (Codex sends instructions and developer messages; many chat templates accept
 * a single system message, first).
 */
function leadingSystemAsOne(messages: Obj[]): Obj[] {
  let n = 0;
  while (messages[n]?.role === 'system' && typeof messages[n].content === 'string') n++;
  if (n < 2) return messages;
  return [
    {
      role: 'system',
      content: messages
        .slice(0, n)
        .map((m) => m.content)
        .join('\n\n'),
    },
    ...messages.slice(n),
  ];
}

/**
 * The chat request finished for the upstream kind: one leading system message; tokens and usage asked for against vLLM.
 */
export function chatRequest(body: Obj, kind: UpstreamKind): { path: string; body: Obj } {
  body.messages = leadingSystemAsOne(body.messages as Obj[]);
  if (body.stream === true) body.stream_options = { include_usage: true };
  if (kind === 'vllm') Object.assign(body, { return_token_ids: true, logprobs: true });
  return { path: 'chat/completions', body };
}

/** Copies the sampling fields the two protocols share with chat, under chat's names. */
export function copyFields(from: Obj, to: Obj, names: Record<string, string>): void {
  for (const [src, dst] of Object.entries(names))
    if (from[src] !== undefined && from[src] !== null) to[dst] = from[src];
}

/**
 * Adds to the assistant message the history ends with, or starts one: a turn's reasoning, text and tool calls come
 * as separate blocks or items, and chat templates render them as one message.
 */
export function pushAssistant(messages: Obj[], part: { content?: string; reasoning?: string; toolCall?: Obj }): void {
  let last = messages[messages.length - 1];
  if (last?.role !== 'assistant') {
    last = { role: 'assistant', content: null };
    messages.push(last);
  }
  if (part.content !== undefined) last.content = ((last.content as string | null) ?? '') + part.content;
  if (part.reasoning !== undefined) last.reasoning = ((last.reasoning as string | undefined) ?? '') + part.reasoning;
  if (part.toolCall) last.tool_calls = [...((last.tool_calls as Obj[] | undefined) ?? []), part.toolCall];
}

/** What a translated answer is made of. */
export interface ChatAnswer {
  id: string;
  /** Unix seconds. */
  created: number;
  content: string | null;
  reasoning: string | null;
  toolCalls: { id: string; name: string; arguments: string }[];
  finishReason: string | null;
  /** The stop string that ended it, where vLLM says (`stop_reason`). */
  stopSequence: string | null;
  inputTokens: number;
  outputTokens: number;
}

/** The parts of a whole chat.completion answer (or one assembled from its stream). */
export function chatAnswer(chat: Obj): ChatAnswer {
  const choice = (Array.isArray(chat.choices) ? chat.choices[0] : undefined) as Obj | undefined;
  const message = (choice?.message ?? {}) as Obj;
  const usage = (chat.usage ?? {}) as Obj;
  const reasoning = message.reasoning ?? message.reasoning_content;
  const calls = Array.isArray(message.tool_calls) ? (message.tool_calls as Obj[]) : [];
  return {
    id: typeof chat.id === 'string' ? chat.id : 'alight',
    created: typeof chat.created === 'number' ? chat.created : Math.floor(Date.now() / 1000),
    content: typeof message.content === 'string' ? message.content : null,
    reasoning: typeof reasoning === 'string' ? reasoning : null,
    toolCalls: calls.map((c, i) => {
      const fn = (c.function ?? {}) as Obj;
      return {
        id: typeof c.id === 'string' ? c.id : `call_${i}`,
        name: String(fn.name ?? ''),
        arguments: String(fn.arguments ?? ''),
      };
    }),
    finishReason: typeof choice?.finish_reason === 'string' ? choice.finish_reason : null,
    stopSequence: typeof choice?.stop_reason === 'string' ? choice.stop_reason : null,
    inputTokens: Number(usage.prompt_tokens ?? 0),
    outputTokens: Number(usage.completion_tokens ?? 0),
  };
}

/**
 * Parses tool arguments for a protocol that carries them as an object; text that is not a JSON object is kept under
 * `_raw`.
 */
export function argumentsObject(text: string): Obj {
  try {
    const value: unknown = JSON.parse(text || '{}');
    if (isRecord(value)) return value;
  } catch {
    /* below */
  }
  return { _raw: text };
}
