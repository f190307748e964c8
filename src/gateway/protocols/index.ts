import { anthropicMessages } from './anthropic-messages.js';
import { openaiChat } from './openai-chat.js';
import { openaiCompletions } from './openai-completions.js';
import { openaiResponses } from './openai-responses.js';
import type { Protocol } from './types.js';

export type ProtocolPath = 'chat/completions' | 'completions' | 'messages' | 'responses';

/** Every wire protocol the gateway serves, keyed by the path after `/v1/`. Register new protocols here. */
const protocols: Record<ProtocolPath, Protocol> = {
  'chat/completions': openaiChat,
  completions: openaiCompletions,
  messages: anthropicMessages,
  responses: openaiResponses,
};

export function protocolFor(path: string): Protocol | undefined {
  return Object.hasOwn(protocols, path) ? protocols[path as ProtocolPath] : undefined;
}

export type { Extracted, HarnessView, Protocol, RolloutMemory, StreamAssembler } from './types.js';
