import { anthropicBroken, anthropicError, anthropicMessage, anthropicView } from './anthropic-answer.js';
import { anthropicToChat, invalidMessages } from './anthropic-request.js';
import { translatedProtocol } from './translated.js';
import { apiPaths } from './types.js';

/** Anthropic Messages (Claude Code, the anthropic SDKs), translated to chat/completions for the upstream. */
export const anthropicMessages = translatedProtocol({
  name: 'anthropic.messages',
  path: 'messages',
  routes: apiPaths('messages'),
  invalid: invalidMessages,
  errorBody: anthropicError,
  toChat: anthropicToChat,
  view: anthropicView,
  answer: (a, harness) => anthropicMessage(a, harness.model),
  native: { kind: 'messages', broken: anthropicBroken },
});
