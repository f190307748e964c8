import { ChatParts, partsView } from './chat-parts.js';
import { argumentsObject, type ChatAnswer, chatAnswer } from './translate.js';
import type { HarnessView } from './types.js';

type Obj = Record<string, unknown>;

const statuses: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  413: 'INVALID_ARGUMENT',
  415: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** Google's error shape (google.rpc.Status, as the Gemini API answers). */
export function geminiError(status: number, message: string): Obj {
  return { error: { code: status, message, status: statuses[status] ?? (status >= 500 ? 'INTERNAL' : 'UNKNOWN') } };
}

const finishReason = (a: ChatAnswer): string => (a.finishReason === 'length' ? 'MAX_TOKENS' : 'STOP');

const usageMetadata = (a: ChatAnswer): Obj => ({
  promptTokenCount: a.inputTokens,
  candidatesTokenCount: a.outputTokens,
  totalTokenCount: a.inputTokens + a.outputTokens,
});

const callPart = (t: ChatAnswer['toolCalls'][number]): Obj => ({
  functionCall: { id: t.id, name: t.name, args: argumentsObject(t.arguments) },
});

/** A GenerateContentResponse for a chat answer: thought, text and function-call parts in the model's order. */
export function geminiResponse(a: ChatAnswer): Obj {
  const parts: Obj[] = [];
  if (a.reasoning) parts.push({ text: a.reasoning, thought: true });
  if (a.content) parts.push({ text: a.content });
  parts.push(...a.toolCalls.map(callPart));
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: finishReason(a), index: 0 }],
    usageMetadata: usageMetadata(a),
    modelVersion: 'alight',
    responseId: a.id,
  };
}

const chunk = (parts: Obj[], extra: Obj = {}): string =>
  `data: ${JSON.stringify({ candidates: [{ content: { role: 'model', parts }, index: 0, ...extra }], modelVersion: 'alight' })}\n\n`;

/** The event that ends a Gemini stream that broke. */
export const geminiBroken = (message: string): string => `data: ${JSON.stringify(geminiError(502, message))}\n\n`;

/**
 * Gemini's stream (`alt=sse`) for a chat/completions stream: a chunk per text or thought delta, each function call in a
 * chunk of its own once its arguments are whole (Gemini sends arguments as an object, never in pieces), then the finish
 * reason and usage. No `[DONE]`.
 */
export function geminiView(): HarnessView {
  const parts = new ChatParts({
    open: () => '',
    delta: (part, _index, text) =>
      part.kind === 'tool' ? '' : chunk([part.kind === 'reasoning' ? { text, thought: true } : { text }]),
    close: (part, _index, text) =>
      part.kind === 'tool' ? chunk([callPart({ id: part.id, name: part.name, arguments: text })]) : '',
  });
  return partsView(parts, {
    whole: (answer) => geminiResponse(chatAnswer(answer)),
    start: () => '',
    end() {
      const a = parts.answer();
      return `data: ${JSON.stringify({
        candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, finishReason: finishReason(a), index: 0 }],
        usageMetadata: usageMetadata(a),
        modelVersion: 'alight',
        responseId: a.id,
      })}\n\n`;
    },
    broken: geminiBroken,
  });
}
