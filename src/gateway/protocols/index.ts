import { anthropicMessages } from './anthropic-messages.js';
import { geminiGenerate, geminiStream } from './gemini.js';
import { openaiChat } from './openai-chat.js';
import { openaiCompletions } from './openai-completions.js';
import { openaiResponses } from './openai-responses.js';
import type { Protocol } from './types.js';

export type ProtocolKind = 'chat' | 'completions' | 'messages' | 'responses' | 'gemini' | 'gemini-stream';

/**
 * Every wire protocol the gateway serves; each says where harnesses POST it (`routes`), which the gateway's agent
 * router serves (agent-routes.ts). Register new protocols here.
 */
export const protocols: Record<ProtocolKind, Protocol> = {
  chat: openaiChat,
  completions: openaiCompletions,
  messages: anthropicMessages,
  responses: openaiResponses,
  gemini: geminiGenerate,
  'gemini-stream': geminiStream,
};

export type { Extracted, HarnessView, Protocol, RolloutMemory, StreamAssembler } from './types.js';
