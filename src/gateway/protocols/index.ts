import { openaiChat } from './openai-chat.js';
import { openaiCompletions } from './openai-completions.js';
import type { Protocol } from './types.js';

/** Every wire protocol the gateway serves, keyed by the path after `/v1/`. Register new protocols here. */
export const protocols: Record<string, Protocol> = {
  [openaiChat.path]: openaiChat,
  [openaiCompletions.path]: openaiCompletions,
};

export type { Extracted, Protocol, StreamAssembler } from './types.js';
