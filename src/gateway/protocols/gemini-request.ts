import { isRecord } from '../../records.js';
import { chatToolCall, copyFields, pushAssistant, textOf } from './translate.js';
import type { RolloutMemory } from './types.js';

type Obj = Record<string, unknown>;

/** A reason a Gemini generateContent body is malformed, or null. */
export function invalidGemini(body: Obj): string | null {
  if (!Array.isArray(body.contents)) return '`contents`: must be an array of Content';
  const bad = body.contents.findIndex((c) => !isRecord(c) || !Array.isArray(c.parts));
  if (bad !== -1) return `\`contents[${bad}]\`: needs \`parts\`, an array of Part`;
  if (body.tools !== undefined && !Array.isArray(body.tools)) return '`tools`: must be an array of Tool';
  const config = body.generationConfig;
  if (config !== undefined && !isRecord(config)) return '`generationConfig`: must be an object';
  if (isRecord(config) && typeof config.candidateCount === 'number' && config.candidateCount > 1)
    return '`generationConfig.candidateCount`: one candidate only (each call records one answer)';
  return null;
}

const partsOf = (content: unknown): Obj[] =>
  (isRecord(content) && Array.isArray(content.parts) ? content.parts : []).filter(isRecord);

/**
 * Ids for the function calls of a history: the one a part carries, else a synthetic one, unique per position (so that
 * parallel calls of one function stay apart); a function response without an id answers the first call of its name
 * not answered yet.
 */
class CallIds {
  private readonly pending = new Map<string, string[]>();

  call(part: Obj, at: string): string {
    const fn = part.functionCall as Obj;
    const id = typeof fn.id === 'string' && fn.id ? fn.id : `call_${at}`;
    const name = String(fn.name ?? '');
    this.pending.set(name, [...(this.pending.get(name) ?? []), id]);
    return id;
  }

  response(part: Obj): string {
    const fn = part.functionResponse as Obj;
    const name = String(fn.name ?? '');
    const queue = this.pending.get(name) ?? [];
    const id = typeof fn.id === 'string' && fn.id ? fn.id : (queue[0] ?? `call_unmatched_${name}`);
    this.pending.set(
      name,
      queue.filter((x) => x !== id),
    );
    return id;
  }
}

function modelTurn(parts: Obj[], messages: Obj[], ids: CallIds, at: number, memory: RolloutMemory): void {
  pushAssistant(messages, {});
  parts.forEach((part, k) => {
    if (isRecord(part.functionCall))
      pushAssistant(messages, {
        toolCall: chatToolCall(
          ids.call(part, `${at}_${k}`),
          String(part.functionCall.name),
          part.functionCall.args ?? {},
          memory,
        ),
      });
    else if (typeof part.text === 'string')
      pushAssistant(messages, part.thought === true ? { reasoning: part.text } : { content: part.text });
  });
}

/** A user turn: function responses become tool messages (first: chat wants them right after the calls), the rest text. */
function userTurn(parts: Obj[], messages: Obj[], ids: CallIds): void {
  const texts: string[] = [];
  for (const part of parts) {
    if (isRecord(part.functionResponse)) {
      const response = part.functionResponse.response;
      messages.push({
        role: 'tool',
        tool_call_id: ids.response(part),
        content: typeof response === 'string' ? response : JSON.stringify(response ?? {}),
      });
    } else if (typeof part.text === 'string') texts.push(part.text);
  }
  if (texts.length) messages.push({ role: 'user', content: texts.join('\n') });
}

/** The history as chat messages: the same Gemini history always gives the same messages. */
export function geminiMessages(body: Obj, memory: RolloutMemory): Obj[] {
  const messages: Obj[] = [];
  const system =
    typeof body.systemInstruction === 'string' ? body.systemInstruction : textOf(partsOf(body.systemInstruction));
  if (system) messages.push({ role: 'system', content: system });
  const ids = new CallIds();
  (body.contents as unknown[]).forEach((content, at) => {
    const parts = partsOf(content);
    if ((content as Obj).role === 'model') modelTurn(parts, messages, ids, at, memory);
    else userTurn(parts, messages, ids);
  });
  return messages;
}

/** Gemini's OpenAPI schema (types in capitals: OBJECT, STRING) as JSON Schema. */
export function jsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(jsonSchema);
  if (!isRecord(schema)) return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([k, v]) => [
      k,
      k === 'type' && typeof v === 'string' ? v.toLowerCase() : k === 'enum' || k === 'required' ? v : jsonSchema(v),
    ]),
  );
}

/** Function declarations as chat tools; other tools (search, code execution) cannot run here: left out, reported. */
function chatTools(tools: unknown[], memory: RolloutMemory): Obj[] {
  const out: Obj[] = [];
  const dropped: string[] = [];
  for (const tool of tools.filter(isRecord)) {
    const declarations = Array.isArray(tool.functionDeclarations) ? tool.functionDeclarations.filter(isRecord) : [];
    for (const d of declarations)
      out.push({
        type: 'function',
        function: {
          name: d.name,
          ...(d.description !== undefined && { description: d.description }),
          parameters: d.parametersJsonSchema ?? jsonSchema(d.parameters ?? { type: 'OBJECT', properties: {} }),
        },
      });
    dropped.push(...Object.keys(tool).filter((k) => k !== 'functionDeclarations'));
  }
  if (dropped.length) memory.dropped('tools', dropped);
  return out;
}

function toolChoice(config: unknown): unknown {
  const calling = isRecord(config) && isRecord(config.functionCallingConfig) ? config.functionCallingConfig : {};
  const names = Array.isArray(calling.allowedFunctionNames) ? calling.allowedFunctionNames : [];
  if (calling.mode === 'NONE') return 'none';
  if (calling.mode === 'ANY')
    return names.length === 1 ? { type: 'function', function: { name: names[0] } } : 'required';
  return undefined;
}

/** The generation config under chat's names: sampling, length, stops, seed, JSON output, thinking off. */
function generation(config: Obj, chat: Obj): void {
  copyFields(config, chat, {
    temperature: 'temperature',
    topP: 'top_p',
    topK: 'top_k',
    maxOutputTokens: 'max_tokens',
    stopSequences: 'stop',
    seed: 'seed',
    presencePenalty: 'presence_penalty',
    frequencyPenalty: 'frequency_penalty',
  });
  const schema = config.responseJsonSchema ?? (config.responseSchema && jsonSchema(config.responseSchema));
  if (schema) chat.response_format = { type: 'json_schema', json_schema: { name: 'response', schema } };
  else if (config.responseMimeType === 'application/json') chat.response_format = { type: 'json_object' };
  const thinking = isRecord(config.thinkingConfig) ? config.thinkingConfig : {};
  if (thinking.thinkingBudget === 0) chat.chat_template_kwargs = { enable_thinking: false };
}

/**
 * The chat/completions body for a Gemini request (before the upstream's token fields); `stream` from the method the
 * URL named (streamGenerateContent).
 */
export function geminiToChat(body: Obj, memory: RolloutMemory, stream: boolean): Obj {
  const chat: Obj = { model: 'gemini', messages: geminiMessages(body, memory), stream };
  if (isRecord(body.generationConfig)) generation(body.generationConfig, chat);
  const tools = Array.isArray(body.tools) ? chatTools(body.tools, memory) : [];
  if (tools.length) {
    chat.tools = tools;
    const choice = toolChoice(body.toolConfig);
    if (choice !== undefined) chat.tool_choice = choice;
  }
  return chat;
}
