import { errorBody } from '../../http.js';
import { relayView } from './relay-view.js';
import { extractWhole, numbers, TokenAccumulator } from './tokens.js';
import type { Extracted, Protocol, StreamAssembler } from './types.js';

type Obj = Record<string, unknown>;

function chatLogprobs(choice: Obj | undefined): number[] | null {
  const content = (choice?.logprobs as Obj | null | undefined)?.content;
  return Array.isArray(content) ? content.map((t: Obj) => t.logprob as number) : null;
}

interface ToolCall {
  id?: string;
  type?: string;
  function: { name: string; arguments: string };
}

class ChatAssembler implements StreamAssembler {
  private readonly tokens = new TokenAccumulator();
  private head: Obj = {};
  private role = 'assistant';
  private content: string | null = null;
  private reasoning: string | null = null;
  private readonly toolCalls: ToolCall[] = [];

  push(chunk: Obj): void {
    if (!this.head.id) this.head = { id: chunk.id, created: chunk.created, model: chunk.model };
    if (chunk.usage) this.tokens.usage = chunk.usage as Obj;
    const choices = chunk.choices as Obj[] | undefined;
    // n > 1 is not recorded: agents sample one answer per call.
    const choice = choices?.find((c) => (c.index ?? 0) === 0);
    this.tokens.add(numbers(chunk.prompt_token_ids), numbers(choice?.token_ids), chatLogprobs(choice));
    if (!choice) return;
    const delta = (choice.delta ?? {}) as Obj;
    if (typeof delta.role === 'string') this.role = delta.role;
    if (typeof delta.content === 'string') this.content = (this.content ?? '') + delta.content;
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === 'string') this.reasoning = (this.reasoning ?? '') + reasoning;
    for (const d of (delta.tool_calls as Obj[] | undefined) ?? []) this.mergeToolCall(d);
    if (typeof choice.finish_reason === 'string') this.tokens.finishReason = choice.finish_reason;
  }

  private mergeToolCall(d: Obj): void {
    const i = typeof d.index === 'number' ? d.index : this.toolCalls.length;
    const call = (this.toolCalls[i] ??= { function: { name: '', arguments: '' } });
    if (typeof d.id === 'string') call.id = d.id;
    if (typeof d.type === 'string') call.type = d.type;
    const fn = (d.function ?? {}) as Obj;
    if (typeof fn.name === 'string') call.function.name += fn.name;
    if (typeof fn.arguments === 'string') call.function.arguments += fn.arguments;
  }

  finished(): boolean {
    return this.tokens.finishReason !== null;
  }

  result(): Extracted {
    const message: Obj = { role: this.role, content: this.content };
    if (this.reasoning !== null) message.reasoning_content = this.reasoning;
    if (this.toolCalls.length) message.tool_calls = this.toolCalls.filter(Boolean);
    return this.tokens.extracted({
      ...this.head,
      object: 'chat.completion',
      choices: [{ index: 0, message, finish_reason: this.tokens.finishReason }],
      ...(this.tokens.usage && { usage: this.tokens.usage }),
    });
  }
}

export const openaiChat: Protocol = {
  name: 'openai.chat',
  path: 'chat/completions',
  invalid: (body) => (Array.isArray(body.messages) ? null : '`messages` must be an array of chat messages'),
  // Training needs token ids and logprobs even when the harness did not ask; its view leaves them out again.
  upstream: (body, kind) => ({
    path: 'chat/completions',
    body: kind === 'vllm' ? { ...body, return_token_ids: true, logprobs: true } : { ...body },
  }),
  extract(body) {
    const choice = (body.choices as Obj[] | undefined)?.[0];
    return extractWhole(body, choice, numbers(body.prompt_token_ids), chatLogprobs(choice));
  },
  assembler: () => new ChatAssembler(),
  view: (harness, upstream, kind) =>
    relayView(harness, upstream, kind, {
      tokenIds: harness.return_token_ids === true,
      logprobs: harness.logprobs === true,
    }),
  errorBody,
};
