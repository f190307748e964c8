import { openaiChat } from './openai-chat.js';
import { openaiCompletions } from './openai-completions.js';
import type { Protocol } from './types.js';

/** Every wire protocol the gateway serves, keyed by the path after `/v1/`. Register new protocols here. */
const protocols = new Map<string, Protocol>([openaiChat, openaiCompletions].map((p) => [p.path, p]));

export function protocolFor(path: string): Protocol | undefined {
  return protocols.get(path);
}

export type { Extracted, Protocol, StreamAssembler } from './types.js';
