import { anthropicBroken, anthropicError, anthropicMessage, anthropicView } from './anthropic-answer.js';
import { anthropicToChat, invalidMessages } from './anthropic-request.js';
import { nativeProtocol } from './native.js';
import { openaiChat } from './openai-chat.js';
import { chatAnswer, chatRequest } from './translate.js';
import type { Protocol } from './types.js';

const own = { name: 'anthropic.messages', path: 'messages', invalid: invalidMessages, errorBody: anthropicError };

/** Anthropic Messages (Claude Code, the anthropic SDKs), translated to chat/completions for the upstream. */
export const anthropicMessages: Protocol = {
  ...own,
  upstream: (body, kind, memory) => chatRequest(anthropicToChat(body, memory), kind),
  extract: openaiChat.extract,
  assembler: openaiChat.assembler,
  view: (harness) => anthropicView(harness),
  translated: { answer: (harness, chat) => anthropicMessage(chatAnswer(chat), harness.model) },
  native: nativeProtocol(own, 'messages', anthropicBroken),
};
