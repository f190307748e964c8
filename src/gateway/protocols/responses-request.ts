import { HttpError } from '../../http.js';
import { isRecord } from '../../records.js';
import { chatToolCall, copyFields, pushAssistant, textOf } from './translate.js';
import type { RolloutMemory } from './types.js';

type Obj = Record<string, unknown>;

/** A reason an OpenAI Responses body is malformed, or null. */
export function invalidResponses(body: Obj): string | null {
  if (typeof body.input !== 'string' && !Array.isArray(body.input))
    return '`input`: must be a string or an array of input items';
  if (Array.isArray(body.input) && body.input.some((i) => !isRecord(i))) return '`input`: every item must be an object';
  if (body.tools !== undefined && !Array.isArray(body.tools)) return '`tools`: must be an array';
  if (body.instructions !== undefined && body.instructions !== null && typeof body.instructions !== 'string')
    return '`instructions`: must be a string';
  return null;
}

const asItems = (input: unknown): Obj[] =>
  typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : (input as Obj[]);

/**
 * The whole history: with `previous_response_id`, the earlier request's history and answer come first (the gateway
 * keeps them).
 */
export function fullInput(body: Obj, memory: RolloutMemory): Obj[] {
  const items = asItems(body.input);
  if (typeof body.previous_response_id !== 'string') return items;
  const earlier = memory.earlier(body.previous_response_id);
  if (!earlier) {
    throw new HttpError(
      400,
      `previous_response_id ${body.previous_response_id} is not ` +
        'a response of this rollout that the gateway still holds',
    );
  }
  return [...fullInput(earlier.request, memory), ...((earlier.response.output as Obj[] | undefined) ?? []), ...items];
}

/** Chat content for a message item: text parts joined, images kept as parts. */
function messageContent(content: unknown): unknown {
  if (!Array.isArray(content)) return typeof content === 'string' ? content : '';
  const images = content.filter((p) => isRecord(p) && p.type === 'input_image' && typeof p.image_url === 'string');
  if (images.length === 0) return textOf(content);
  return content
    .filter(isRecord)
    .map((p) =>
      p.type === 'input_image'
        ? { type: 'image_url', image_url: { url: p.image_url } }
        : { type: 'text', text: String(p.text ?? '') },
    );
}

function reasoningText(item: Obj): string {
  const parts = Array.isArray(item.content) && item.content.length ? item.content : item.summary;
  return textOf(parts);
}

/** One input item into the chat history; the items chat cannot carry are reported. */
function addItem(item: Obj, messages: Obj[], memory: RolloutMemory, skipped: string[]): void {
  const type = item.type ?? (item.role ? 'message' : undefined);
  // A harness that lets the API store its answers names their items instead of resending them.
  const referred = type === 'item_reference' ? memory.item(String(item.id)) : undefined;
  if (referred) addItem(referred, messages, memory, skipped);
  else if (type === 'message' && item.role === 'assistant') pushAssistant(messages, { content: textOf(item.content) });
  else if (type === 'message')
    messages.push({ role: item.role === 'developer' ? 'system' : item.role, content: messageContent(item.content) });
  else if (type === 'reasoning') pushAssistant(messages, { reasoning: reasoningText(item) });
  else if (type === 'function_call')
    pushAssistant(messages, {
      toolCall: chatToolCall(String(item.call_id), String(item.name), String(item.arguments ?? ''), memory),
    });
  else if (type === 'function_call_output')
    messages.push({ role: 'tool', tool_call_id: item.call_id, content: textOf(item.output) });
  else skipped.push(String(type));
}

/** Function tools as chat tools; the rest (web search, namespaces, custom and hosted tools) the upstream cannot run. */
function chatTools(tools: unknown[], memory: RolloutMemory): Obj[] {
  const out: Obj[] = [];
  const dropped: string[] = [];
  for (const t of tools.filter(isRecord)) {
    if (t.type === 'function' && typeof t.name === 'string') {
      out.push({
        type: 'function',
        function: {
          name: t.name,
          ...(t.description != null && { description: t.description }),
          parameters: t.parameters ?? { type: 'object', properties: {} },
        },
      });
    } else dropped.push(String(t.name ?? t.type));
  }
  if (dropped.length) memory.dropped('tools', dropped);
  return out;
}

function toolChoice(choice: unknown): unknown {
  if (isRecord(choice))
    return choice.type === 'function' ? { type: 'function', function: { name: choice.name } } : 'auto';
  return choice;
}

/** The chat/completions body for a Responses request (before the upstream's token fields). */
export function responsesToChat(body: Obj, memory: RolloutMemory): Obj {
  const messages: Obj[] = [];
  if (typeof body.instructions === 'string' && body.instructions)
    messages.push({ role: 'system', content: body.instructions });
  const skipped: string[] = [];
  for (const item of fullInput(body, memory)) addItem(item, messages, memory, skipped);
  if (skipped.length) memory.dropped('input items', skipped);
  const chat: Obj = { model: body.model, messages };
  copyFields(body, chat, {
    max_output_tokens: 'max_tokens',
    temperature: 'temperature',
    top_p: 'top_p',
    parallel_tool_calls: 'parallel_tool_calls',
    stream: 'stream',
  });
  const tools = Array.isArray(body.tools) ? chatTools(body.tools, memory) : [];
  if (tools.length) {
    chat.tools = tools;
    if (body.tool_choice !== undefined) chat.tool_choice = toolChoice(body.tool_choice);
  } else delete chat.parallel_tool_calls;
  const format = isRecord(body.text) && isRecord(body.text.format) ? body.text.format : null;
  if (format?.type === 'json_schema') {
    chat.response_format = {
      type: 'json_schema',
      json_schema: { name: format.name, schema: format.schema, strict: format.strict },
    };
  } else if (format?.type === 'json_object') chat.response_format = { type: 'json_object' };
  return chat;
}
