import type { IncomingHttpHeaders } from 'node:http';
import { HttpError } from '../http.js';
import { isRecord } from '../records.js';
import { type CallPurpose, callPurposes } from '../store/calls.js';
import { textOf } from './protocols/translate.js';

const purposeHeader = 'x-alight-purpose';

type Obj = Record<string, unknown>;

/** The properties of the JSON the request constrains its answer to (chat's `response_format`), or none. */
function answerFields(chat: Obj): string[] {
  const format = chat.response_format;
  const schema = isRecord(format) && isRecord(format.json_schema) ? format.json_schema.schema : undefined;
  return isRecord(schema) && isRecord(schema.properties) ? Object.keys(schema.properties) : [];
}

function lastUserText(chat: Obj): string {
  const messages = Array.isArray(chat.messages) ? chat.messages : [];
  const last = messages[messages.length - 1];
  return isRecord(last) && last.role === 'user' ? textOf(last.content) : '';
}

/**
 * Side calls known by what they ask for, read from Gemini CLI 0.61.0's source (packages/core): the answer schema of
 * its model router (`model_choice`, or `complexity_score` for Gemini 3), next-speaker check (`next_speaker`) and loop
 * check (`unproductive_state_confidence`), and its compression's closing instruction (`<state_snapshot>`). Each is a
 * request no agent turn makes.
 */
const recognised: Record<Exclude<CallPurpose, 'main' | 'side'>, (chat: Obj) => boolean> = {
  router: (chat) => answerFields(chat).some((f) => f === 'model_choice' || f === 'complexity_score'),
  'next-speaker': (chat) => answerFields(chat).includes('next_speaker'),
  'loop-check': (chat) => answerFields(chat).includes('unproductive_state_confidence'),
  compression: (chat) => lastUserText(chat).includes('<state_snapshot>'),
};

/**
 * The call's purpose: the harness's own word (`x-alight-purpose`) first, else a recognised side call, else `main`.
 * `chat` is the request as sent upstream; throws 400 for a header naming no purpose.
 */
export function callPurpose(headers: IncomingHttpHeaders, chat: Obj): CallPurpose {
  const said = headers[purposeHeader];
  if (said !== undefined) {
    const word = String(said).trim();
    if ((callPurposes as readonly string[]).includes(word)) return word as CallPurpose;
    throw new HttpError(400, `${purposeHeader}: "${word}" is not a purpose (one of ${callPurposes.join(', ')})`);
  }
  for (const [purpose, is] of Object.entries(recognised)) if (is(chat)) return purpose as CallPurpose;
  return 'main';
}
