import { anthropicMessages } from './anthropic-messages.js';
import { geminiGenerate, geminiStream } from './gemini.js';
import { openaiChat } from './openai-chat.js';
import { openaiCompletions } from './openai-completions.js';
import { openaiResponses } from './openai-responses.js';
import type { Protocol } from './types.js';

export type ProtocolPath =
  | 'chat/completions'
  | 'completions'
  | 'messages'
  | 'responses'
  | 'models:generateContent'
  | 'models:streamGenerateContent';

/** Every wire protocol the gateway serves, keyed by the path after `/v1/` (Gemini's by method). Register new protocols here. */
const protocols: Record<ProtocolPath, Protocol> = {
  'chat/completions': openaiChat,
  completions: openaiCompletions,
  messages: anthropicMessages,
  responses: openaiResponses,
  // Gemini's `v1beta/models/{model}:<method>`, by method (agent-routes.ts reads the model out of the path).
  'models:generateContent': geminiGenerate,
  'models:streamGenerateContent': geminiStream,
};

export function protocolFor(path: string): Protocol | undefined {
  return Object.hasOwn(protocols, path) ? protocols[path as ProtocolPath] : undefined;
}

export type { Extracted, HarnessView, Protocol, RolloutMemory, StreamAssembler } from './types.js';
