import { ChatParts, type Part, partsView } from './chat-parts.js';
import { argumentsObject, type ChatAnswer, chatAnswer } from './translate.js';
import type { HarnessView } from './types.js';

type Obj = Record<string, unknown>;

const errorTypes: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  415: 'invalid_request_error',
  429: 'rate_limit_error',
  503: 'overloaded_error',
  529: 'overloaded_error',
};

/** Anthropic's error shape; its type follows from the status as Anthropic's API sets it. */
export function anthropicError(status: number, message: string): Obj {
  return {
    type: 'error',
    error: { type: errorTypes[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error'), message },
  };
}

function stopReason(a: ChatAnswer): string {
  if (a.finishReason === 'tool_calls' || a.toolCalls.length > 0) return 'tool_use';
  if (a.finishReason === 'length') return 'max_tokens';
  return a.stopSequence !== null ? 'stop_sequence' : 'end_turn';
}

const usage = (a: ChatAnswer): Obj => ({
  input_tokens: a.inputTokens,
  output_tokens: a.outputTokens,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
});

const messageId = (chatId: string): string => `msg_${chatId}`;

/** The Anthropic message for a chat answer; `model` is the name the harness asked for. */
export function anthropicMessage(a: ChatAnswer, model: unknown): Obj {
  const content: Obj[] = [];
  if (a.reasoning) content.push({ type: 'thinking', thinking: a.reasoning, signature: '' });
  if (a.content) content.push({ type: 'text', text: a.content });
  for (const t of a.toolCalls)
    content.push({ type: 'tool_use', id: t.id, name: t.name, input: argumentsObject(t.arguments) });
  return {
    id: messageId(a.id),
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReason(a),
    stop_sequence: a.stopSequence,
    usage: usage(a),
  };
}

const sse = (type: string, data: Obj = {}): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

function startBlock(part: Part): Obj {
  if (part.kind === 'tool') return { type: 'tool_use', id: part.id, name: part.name, input: {} };
  return part.kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' };
}

function blockDelta(part: Part, text: string): Obj {
  if (part.kind === 'text') return { type: 'text_delta', text };
  if (part.kind === 'reasoning') return { type: 'thinking_delta', thinking: text };
  return { type: 'input_json_delta', partial_json: text };
}

/** The event that ends an Anthropic stream that broke. */
export const anthropicBroken = (message: string): string => sse('error', anthropicError(502, message));

/** Anthropic's event stream for a chat/completions stream, event for event. */
export function anthropicView(harness: Obj): HarnessView {
  const model = harness.model;
  // Tool input is sent whole at the block's end, as the object the whole answer has (`argumentsObject`): text a model
  // wrote that is not one (cut short, or not JSON) cannot be told from a good start before the end, and the SDKs
  // parse what was streamed at the block's stop (throwing, or giving a partial object, where the whole answer gives
  // `{"_raw": …}`).
  const parts = new ChatParts({
    open: (part, index) => sse('content_block_start', { index, content_block: startBlock(part) }),
    delta: (part, index, text) =>
      part.kind === 'tool' ? '' : sse('content_block_delta', { index, delta: blockDelta(part, text) }),
    close: (part, index, text) =>
      (part.kind === 'tool'
        ? sse('content_block_delta', { index, delta: blockDelta(part, JSON.stringify(argumentsObject(text))) })
        : '') +
      // The SDKs expect a thinking block to end with its signature; there is none to give.
      (part.kind === 'reasoning'
        ? sse('content_block_delta', { index, delta: { type: 'signature_delta', signature: '' } })
        : '') +
      sse('content_block_stop', { index }),
  });
  return partsView(parts, {
    whole: (answer) => anthropicMessage(chatAnswer(answer), model),
    start(chunk) {
      const message = anthropicMessage({ ...parts.answer(), inputTokens: chunk.tokens.promptIds?.length ?? 0 }, model);
      return (
        sse('message_start', {
          message: { ...message, id: messageId(String(chunk.body.id ?? 'alight')), content: [], stop_reason: null },
        }) + sse('ping')
      );
    },
    end() {
      const a = parts.answer();
      return (
        sse('message_delta', {
          delta: { stop_reason: stopReason(a), stop_sequence: a.stopSequence },
          usage: usage(a),
        }) + sse('message_stop')
      );
    },
    broken: anthropicBroken,
  });
}
