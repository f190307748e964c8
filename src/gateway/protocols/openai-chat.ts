import { errorBody } from '../../http.js';
import { relayView } from './relay-view.js';
import type { ScannedAnswer } from './token-fields.js';
import { extractWhole, streamChoice, TokenAccumulator } from './tokens.js';
import { withOwnArguments } from './translate.js';
import { apiPaths, type Extracted, type Protocol, type StreamAssembler } from './types.js';

type Obj = Record<string, unknown>;

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

  push(read: ScannedAnswer): void {
    const chunk = read.body;
    if (!this.head.id) this.head = { id: chunk.id, created: chunk.created, model: chunk.model };
    if (chunk.usage) this.tokens.usage = chunk.usage as Obj;
    // n > 1 is not recorded: agents sample one answer per call.
    const { choice, tokens } = streamChoice(read);
    this.tokens.add(read.tokens.promptIds, tokens?.tokenIds ?? null, tokens?.content ?? null);
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
  routes: apiPaths('chat/completions'),
  invalid: (body) => (Array.isArray(body.messages) ? null : '`messages` must be an array of chat messages'),
  // Training needs token ids and logprobs even when the harness did not ask; its view leaves them out again.
  upstream: (body, kind, memory) => ({
    path: 'chat/completions',
    body:
      kind === 'vllm'
        ? {
            ...body,
            messages: withOwnArguments(body.messages as unknown[], memory),
            return_token_ids: true,
            logprobs: true,
          }
        : { ...body },
  }),
  chatAnswers: true,
  tokenFields: true,
  extract: (a) => extractWhole(a, a.tokens.promptIds, a.tokens.choices[0]?.content ?? null),
  assembler: () => new ChatAssembler(),
  view: (harness, upstream, kind) =>
    relayView(harness, upstream, kind, {
      tokenIds: harness.return_token_ids === true,
      logprobs: harness.logprobs === true,
    }),
  errorBody,
};
