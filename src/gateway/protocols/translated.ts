import { nativeProtocol } from './native.js';
import { openaiChat } from './openai-chat.js';
import { type ChatAnswer, chatAnswer, chatRequest } from './translate.js';
import type { HarnessView, Protocol, RolloutMemory } from './types.js';

type Obj = Record<string, unknown>;

/** What one protocol the gateway translates to chat/completions brings of its own. */
export interface Translation extends Pick<Protocol, 'name' | 'path' | 'routes' | 'invalid' | 'errorBody'> {
  /** The chat body for a harness request (before the upstream's token fields). */
  toChat(body: Obj, memory: RolloutMemory): Obj;
  view(harness: Obj): HarnessView;
  /** The harness's answer for a chat answer. */
  answer(a: ChatAnswer, harness: Obj): Obj;
  /** As relayed unchanged to an upstream that serves the protocol (none: always translated). */
  native?: { kind: 'messages' | 'responses'; broken(message: string): string };
}

/**
 * A protocol translated to chat/completions for the upstream: chat's extraction and assembly, the harness's own view.
 */
export function translatedProtocol(t: Translation): Protocol {
  const own = { name: t.name, path: t.path, routes: t.routes, invalid: t.invalid, errorBody: t.errorBody };
  return {
    ...own,
    upstream: (body, kind, memory) => chatRequest(t.toChat(body, memory), kind),
    tokenFields: true,
    extract: openaiChat.extract,
    assembler: openaiChat.assembler,
    view: (harness) => t.view(harness),
    translated: { answer: (harness, chat) => t.answer(chatAnswer(chat), harness) },
    ...(t.native && { native: nativeProtocol(own, t.native.kind, t.native.broken) }),
  };
}
