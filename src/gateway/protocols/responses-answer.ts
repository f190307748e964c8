import { ChatParts, type Part, type PartEvents, partsView } from './chat-parts.js';
import { type ChatAnswer, chatAnswer } from './translate.js';
import type { HarnessView } from './types.js';

type Obj = Record<string, unknown>;

const ids = {
  reasoning: (chatId: string): string => `rs_${chatId}`,
  message: (chatId: string): string => `msg_${chatId}`,
  call: (callId: string): string => `fc_${callId}`,
};

const textPart = (text: string): Obj => ({ type: 'output_text', text, annotations: [], logprobs: [] });
const reasoningText = (text: string): Obj => ({ type: 'reasoning_text', text });
const reasoningItem = (id: string, text: string): Obj => ({
  type: 'reasoning',
  id,
  summary: [],
  content: text ? [reasoningText(text)] : [],
});
/** The content part a reasoning or text item streams into. */
const partOf = (part: Part, text: string): Obj => (part.kind === 'reasoning' ? reasoningText(text) : textPart(text));
const messageItem = (id: string, text: string | null, status: string): Obj => ({
  type: 'message',
  id,
  status,
  role: 'assistant',
  content: text === null ? [] : [textPart(text)],
});
const callItem = (callId: string, name: string, args: string, status: string): Obj => ({
  type: 'function_call',
  id: ids.call(callId),
  call_id: callId,
  name,
  arguments: args,
  status,
});

/** The Responses `response` object for a chat answer, echoing the request's settings as the API does. */
export function responseObject(a: ChatAnswer, harness: Obj, status?: string): Obj {
  const output: Obj[] = [];
  if (a.reasoning) output.push(reasoningItem(ids.reasoning(a.id), a.reasoning));
  if (a.content) output.push(messageItem(ids.message(a.id), a.content, 'completed'));
  for (const t of a.toolCalls) output.push(callItem(t.id, t.name, t.arguments, 'completed'));
  const incomplete = a.finishReason === 'length';
  return {
    id: `resp_${a.id}`,
    object: 'response',
    created_at: a.created,
    status: status ?? (incomplete ? 'incomplete' : 'completed'),
    error: null,
    incomplete_details: incomplete && !status ? { reason: 'max_output_tokens' } : null,
    instructions: harness.instructions ?? null,
    max_output_tokens: harness.max_output_tokens ?? null,
    model: harness.model,
    output,
    parallel_tool_calls: harness.parallel_tool_calls ?? true,
    previous_response_id: harness.previous_response_id ?? null,
    reasoning: harness.reasoning ?? { effort: null, summary: null },
    store: harness.store ?? true,
    temperature: harness.temperature ?? 1,
    text: harness.text ?? { format: { type: 'text' } },
    tool_choice: harness.tool_choice ?? 'auto',
    tools: harness.tools ?? [],
    top_p: harness.top_p ?? 1,
    truncation: 'disabled',
    metadata: harness.metadata ?? {},
    usage: status
      ? null
      : {
          input_tokens: a.inputTokens,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: a.outputTokens,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: a.inputTokens + a.outputTokens,
        },
  };
}

/**
 * The event that ends a Responses stream that broke (its own sequence numbers are unknown here: the last one's follow).
 */
export const responsesBroken = (message: string): string =>
  'event: response.failed\ndata: ' +
  JSON.stringify({
    type: 'response.failed',
    response: { object: 'response', status: 'failed', error: { code: 'server_error', message } },
  }) +
  '\n\n';

/** The Responses event stream for a chat/completions stream, event for event. */
export function responsesView(harness: Obj): HarnessView {
  let seq = 0;
  let chatId = 'alight';
  const ev: Emit = (type, data) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`;
  const itemId = (part: Part): string =>
    part.kind === 'tool' ? ids.call(part.id) : part.kind === 'text' ? ids.message(chatId) : ids.reasoning(chatId);
  const parts = new ChatParts(partEvents(ev, itemId));
  const snapshot = (status?: string): Obj => responseObject({ ...parts.answer(), id: chatId }, harness, status);
  return partsView(parts, {
    whole: (answer) => responseObject(chatAnswer(answer), harness),
    start({ body: chunk }) {
      if (typeof chunk.id === 'string') chatId = chunk.id;
      const response = { ...snapshot('in_progress'), output: [] };
      return ev('response.created', { response }) + ev('response.in_progress', { response });
    },
    end() {
      const response = snapshot();
      return ev(response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response });
    },
    broken: (message) =>
      ev('response.failed', { response: { ...snapshot('failed'), error: { code: 'server_error', message } } }),
  });
}

/** Writes one numbered Responses event. */
type Emit = (type: string, data: Obj) => string;

/** The Responses events that open, extend and close each output item. */
function partEvents(ev: Emit, itemId: (part: Part) => string): PartEvents {
  return {
    open(part, index) {
      const at = { output_index: index };
      if (part.kind === 'tool')
        return ev('response.output_item.added', { ...at, item: callItem(part.id, part.name, '', 'in_progress') });
      // Each text part is announced before its deltas (the stream helpers of the openai SDKs throw otherwise), the
      // reasoning one too, as vLLM's own Responses server does.
      const item =
        part.kind === 'reasoning' ? reasoningItem(itemId(part), '') : messageItem(itemId(part), null, 'in_progress');
      return (
        ev('response.output_item.added', { ...at, item }) +
        ev('response.content_part.added', { ...at, item_id: itemId(part), content_index: 0, part: partOf(part, '') })
      );
    },
    delta(part, index, delta) {
      const at = { item_id: itemId(part), output_index: index };
      if (part.kind === 'tool') return ev('response.function_call_arguments.delta', { ...at, delta });
      if (part.kind === 'reasoning') return ev('response.reasoning_text.delta', { ...at, content_index: 0, delta });
      return ev('response.output_text.delta', { ...at, content_index: 0, delta, logprobs: [] });
    },
    close: (part, index, text) => closeEvents(ev, part, index, itemId(part), text),
  };
}

/** The events that end an output item, the whole item last. */
function closeEvents(ev: Emit, part: Part, index: number, itemId: string, text: string): string {
  const at = { item_id: itemId, output_index: index };
  if (part.kind === 'tool') {
    return (
      ev('response.function_call_arguments.done', { ...at, name: part.name, arguments: text }) +
      ev('response.output_item.done', { output_index: index, item: callItem(part.id, part.name, text, 'completed') })
    );
  }
  const reasoning = part.kind === 'reasoning';
  return (
    (reasoning
      ? ev('response.reasoning_text.done', { ...at, content_index: 0, text })
      : ev('response.output_text.done', { ...at, content_index: 0, text, logprobs: [] })) +
    ev('response.content_part.done', { ...at, content_index: 0, part: partOf(part, text) }) +
    ev('response.output_item.done', {
      output_index: index,
      item: reasoning ? reasoningItem(itemId, text) : messageItem(itemId, text, 'completed'),
    })
  );
}
