import { isRecord } from '../../records.js';
import { chatToolCall, copyFields, pushAssistant, textOf } from './translate.js';
import type { RolloutMemory } from './types.js';

type Obj = Record<string, unknown>;

/** A reason an Anthropic Messages body is malformed, or null. */
export function invalidMessages(body: Obj): string | null {
  if (!Array.isArray(body.messages)) return '`messages`: must be an array of messages';
  const bad = body.messages.findIndex(
    (m) => !isRecord(m) || typeof m.role !== 'string' || (typeof m.content !== 'string' && !Array.isArray(m.content)),
  );
  if (bad !== -1) return `\`messages.${bad}\`: needs a \`role\` and a \`content\` string or array of blocks`;
  if (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens) || body.max_tokens < 1)
    return '`max_tokens`: must be a positive integer';
  if (body.system !== undefined && typeof body.system !== 'string' && !Array.isArray(body.system))
    return '`system`: must be a string or an array of text blocks';
  if (body.tools !== undefined && !Array.isArray(body.tools)) return '`tools`: must be an array';
  return null;
}

/** A chat content part for an Anthropic image block (base64 becomes a data URL). */
function imagePart(block: Obj): Obj | null {
  const source = (block.source ?? {}) as Obj;
  if (source.type === 'base64')
    return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } };
  if (source.type === 'url') return { type: 'image_url', image_url: { url: source.url } };
  return null;
}

/**
 * A user turn: tool results become tool messages (first, as chat wants them right after the tool calls), the rest one
 * user message.
 */
function userTurn(content: Obj[], messages: Obj[]): void {
  const parts: Obj[] = [];
  for (const block of content) {
    if (block.type === 'tool_result') {
      messages.push({ role: 'tool', tool_call_id: block.tool_use_id, content: textOf(block.content) });
    } else if (block.type === 'text') {
      parts.push({ type: 'text', text: block.text });
    } else if (block.type === 'image') {
      const part = imagePart(block);
      if (part) parts.push(part);
    }
  }
  if (parts.length === 0) return;
  // All text: one string, as chat templates render it; with images the parts stay parts.
  const onlyText = parts.every((p) => p.type === 'text');
  messages.push({ role: 'user', content: onlyText ? parts.map((p) => p.text).join('\n') : parts });
}

function assistantTurn(content: Obj[], messages: Obj[], memory: RolloutMemory): void {
  pushAssistant(messages, {});
  for (const block of content) {
    if (block.type === 'text') pushAssistant(messages, { content: String(block.text ?? '') });
    else if (block.type === 'thinking') pushAssistant(messages, { reasoning: String(block.thinking ?? '') });
    else if (block.type === 'tool_use')
      pushAssistant(messages, { toolCall: chatToolCall(String(block.id), String(block.name), block.input, memory) });
  }
}

function systemText(system: unknown): string {
  return Array.isArray(system)
    ? system
        .filter(isRecord)
        .map((b) => String(b.text ?? ''))
        .join('\n\n')
    : String(system ?? '');
}

/** The history as chat messages: the same Anthropic history always gives the same messages. */
export function anthropicMessages(body: Obj, memory: RolloutMemory): Obj[] {
  const messages: Obj[] = [];
  const system = systemText(body.system);
  if (system) messages.push({ role: 'system', content: system });
  for (const m of body.messages as Obj[]) {
    const blocks =
      typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : (m.content as unknown[]).filter(isRecord);
    if (m.role === 'assistant') assistantTurn(blocks, messages, memory);
    else if (m.role === 'system') messages.push({ role: 'system', content: systemText(blocks) });
    else userTurn(blocks, messages);
  }
  return messages;
}

/** Anthropic tools as chat functions; server tools and deferred tools (which the model does not see) are left out. */
function chatTools(tools: unknown[], memory: RolloutMemory): Obj[] {
  const out: Obj[] = [];
  const dropped: string[] = [];
  for (const t of tools.filter(isRecord)) {
    if (isRecord(t.input_schema) && t.defer_loading !== true) {
      out.push({
        type: 'function',
        function: {
          name: t.name,
          ...(t.description !== undefined && { description: t.description }),
          parameters: t.input_schema,
        },
      });
    } else dropped.push(String(t.name ?? t.type));
  }
  if (dropped.length) memory.dropped('tools', dropped);
  return out;
}

function toolChoice(choice: Obj): unknown {
  if (choice.type === 'any') return 'required';
  if (choice.type === 'tool') return { type: 'function', function: { name: choice.name } };
  return choice.type === 'none' ? 'none' : 'auto';
}

/** The chat/completions body for an Anthropic Messages request (before the upstream's token fields). */
export function anthropicToChat(body: Obj, memory: RolloutMemory): Obj {
  const chat: Obj = { model: body.model, messages: anthropicMessages(body, memory) };
  copyFields(body, chat, {
    max_tokens: 'max_tokens',
    stop_sequences: 'stop',
    temperature: 'temperature',
    top_p: 'top_p',
    top_k: 'top_k',
    stream: 'stream',
  });
  const tools = Array.isArray(body.tools) ? chatTools(body.tools, memory) : [];
  if (tools.length) chat.tools = tools;
  if (tools.length && isRecord(body.tool_choice)) {
    chat.tool_choice = toolChoice(body.tool_choice);
    if (body.tool_choice.disable_parallel_tool_use === true) chat.parallel_tool_calls = false;
  }
  // Thinking switched off maps to the chat templates' switch (Qwen3's); any other setting keeps the template's default.
  if (isRecord(body.thinking) && body.thinking.type === 'disabled')
    chat.chat_template_kwargs = { enable_thinking: false };
  return chat;
}
