import { geminiError, geminiResponse, geminiView } from './gemini-answer.js';
import { geminiToChat, invalidGemini } from './gemini-request.js';
import { translatedProtocol } from './translated.js';

/**
 * The Gemini API (Gemini CLI, Google's GenAI SDKs) translated to chat/completions for the upstream: one protocol per
 * method, as the method (in the URL, `models/{model}:generateContent` or `:streamGenerateContent`) says whether the
 * answer streams.
 */
function gemini(method: 'generateContent' | 'streamGenerateContent') {
  return translatedProtocol({
    name: 'gemini',
    path: `models:${method}`,
    routes: [`v1beta/models/{model}:${method}`, `v1/models/{model}:${method}`],
    invalid: invalidGemini,
    errorBody: (status, message) => geminiError(status, message),
    toChat: (body, memory) => geminiToChat(body, memory, method === 'streamGenerateContent'),
    view: () => geminiView(),
    answer: (a) => geminiResponse(a),
  });
}

export const geminiGenerate = gemini('generateContent');
export const geminiStream = gemini('streamGenerateContent');
