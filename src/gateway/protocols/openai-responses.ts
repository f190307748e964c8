import { errorBody } from '../../http.js';
import { responseObject, responsesBroken, responsesView } from './responses-answer.js';
import { invalidResponses, responsesToChat } from './responses-request.js';
import { translatedProtocol } from './translated.js';
import { apiPaths } from './types.js';

/**
 * OpenAI Responses (Codex, the Agents SDK, the AI SDK's default provider), translated to chat/completions for the
 * upstream.
 */
export const openaiResponses = translatedProtocol({
  name: 'openai.responses',
  path: 'responses',
  routes: apiPaths('responses'),
  invalid: invalidResponses,
  errorBody,
  toChat: responsesToChat,
  view: responsesView,
  answer: responseObject,
  native: { kind: 'responses', broken: responsesBroken },
});
