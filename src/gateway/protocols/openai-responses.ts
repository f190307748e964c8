import { nativeProtocol } from './native.js';
import { openaiChat } from './openai-chat.js';
import { openaiErrorBody } from './relay-view.js';
import { responseObject, responsesBroken, responsesView } from './responses-answer.js';
import { invalidResponses, responsesToChat } from './responses-request.js';
import { chatAnswer, chatRequest } from './translate.js';
import type { Protocol } from './types.js';

const own = { name: 'openai.responses', path: 'responses', invalid: invalidResponses, errorBody: openaiErrorBody };

/** OpenAI Responses (Codex, the Agents SDK, the AI SDK's default provider), translated to chat/completions for the upstream. */
export const openaiResponses: Protocol = {
  ...own,
  upstream: (body, kind, memory) => chatRequest(responsesToChat(body, memory), kind),
  extract: openaiChat.extract,
  assembler: openaiChat.assembler,
  view: (harness) => responsesView(harness),
  translated: { answer: (harness, chat) => responseObject(chatAnswer(chat), harness) },
  native: nativeProtocol(own, 'responses', responsesBroken),
};
