import { isRecord } from '../../records.js';
import { parseBareNumbers } from './python-json.js';
import { ScanMiss, scanTokenFields } from './token-scan.js';
import {
  type ChoiceTokens,
  type FieldMember,
  logprobsOf,
  type PromptIdsHint,
  type TokenFields,
  tokenIds,
} from './token-types.js';

export type { ChoiceTokens, FieldMember, PromptIdsHint, TokenFields } from './token-types.js';

type Obj = Record<string, unknown>;

/** An upstream answer or stream event as the gateway reads it. */
export interface ScannedAnswer {
  /** Its JSON text as the upstream sent it (null: a stream event parsed whole, as text). */
  bytes: Buffer | null;
  /**
   * Parsed, without its token fields when it is a whole answer (what is recorded, and all a translating view reads);
   * a stream event parsed whole keeps them (the assemblers read only the rest): copying each event costs.
   */
  body: Obj;
  tokens: TokenFields;
  /** The top-level object's members first, then each choice's; null when the text was parsed whole. */
  members: FieldMember[][] | null;
  /** The whole answer, when it was parsed whole (a view that rewrites it reshapes this). */
  parsed: Obj | null;
  /** Whether its text held Python's bare NaN or Infinity: a view that writes it anew writes them bare too. */
  bare: boolean;
}

/**
 * How an answer is read: `scan` its token fields from the bytes (a vLLM upstream), `parse` it whole and take them
 * from the object (another upstream of a protocol with token fields), or take it `raw` (a protocol without them).
 */
export type ReadMode = 'scan' | 'parse' | 'raw';

/** Below this, a stream event is parsed whole: the scanner pays off on the big ones that carry prompt ids. */
const scanFrom = 2048;

/**
 * The fields vLLM adds to an answer when the gateway asks for token ids and logprobs (`prompt_logprobs` it never asks
 * for: a harness that does gets them).
 */
export const idFields = ['prompt_token_ids', 'token_ids'];
export const logprobFields = ['logprobs'];
/** Recorded answers keep none of these: the values are stored as typed arrays instead (prompt logprobs not at all). */
const stored = {
  top: new Set(['prompt_token_ids', 'prompt_logprobs']),
  choice: new Set([...idFields, ...logprobFields, 'prompt_logprobs']),
};

/**
 * Reads an answer or stream event. `scan`: its token fields are read from the bytes and only the rest is parsed;
 * bytes the scanner does not expect (and small events, where JSON.parse is as cheap) are parsed whole, with the same
 * result (token-fields test). Throws for text that is not a JSON object. `hint`: the rollout's last prompt ids (scan).
 */
export function readAnswer(data: Buffer | string, mode: ReadMode, hint?: PromptIdsHint): ScannedAnswer {
  const bytes = typeof data === 'string' ? null : data;
  // An event whose JSON spans several `data:` lines is parsed whole: its cut bytes would not be one SSE line.
  if (mode === 'scan' && (bytes || (data.length >= scanFrom && !data.includes('\n')))) {
    const b = bytes ?? Buffer.from(data);
    try {
      const { tokens, members } = scanTokenFields(b, hint);
      const rest = parseObject(cutMembers(b, members, stored).toString());
      return { bytes: b, body: rest.value, tokens, members, parsed: null, bare: rest.bare };
    } catch (err) {
      if (!(err instanceof ScanMiss)) throw err;
    }
  }
  const { value: parsed, bare } = parseObject(typeof data === 'string' ? data : data.toString());
  if (mode === 'raw') return { bytes, body: parsed, tokens: noTokens(), members: null, parsed, bare };
  const body = bytes ? stripped(parsed) : parsed;
  return { bytes, body, tokens: tokensOf(parsed), members: null, parsed, bare };
}

const noTokens = (): TokenFields => ({ promptIds: null, choices: [], refused: null });

/** Parses a JSON object, Python's bare NaN and Infinity included (`bare`: there were some). */
export function parseObject(text: string): { value: Obj; bare: boolean } {
  let value: unknown;
  let bare = false;
  try {
    value = JSON.parse(text);
  } catch (err) {
    value = parseBareNumbers(text, err);
    bare = true;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not an object');
  return { value: value as Obj, bare };
}

/** The reference reading of a parsed answer: the scanner's result must equal it for every text (token-fields test). */
export function tokenFieldsOf(answer: Obj): { body: Obj; tokens: TokenFields } {
  return { body: stripped(answer), tokens: tokensOf(answer) };
}

/** The answer without its token fields. */
function stripped(answer: Obj): Obj {
  const body = strip(answer, stored.top);
  if (Array.isArray(answer.choices))
    body.choices = answer.choices.map((c) => (isRecord(c) ? strip(c, stored.choice) : c));
  return body;
}

function tokensOf(answer: Obj): TokenFields {
  const t = noTokens();
  t.promptIds = tokenIds(answer.prompt_token_ids, t);
  // Loops and direct fields, not map and spread: a stream reads ~200 small events per answer.
  if (Array.isArray(answer.choices))
    for (const c of answer.choices) t.choices.push(choiceTokens(isRecord(c) ? c : {}, t));
  return t;
}

function choiceTokens(c: Obj, t: TokenFields): ChoiceTokens {
  const { content, tokenLogprobs } = logprobsOf(c.logprobs as Obj | null | undefined, t);
  return { tokenIds: tokenIds(c.token_ids, t), promptIds: tokenIds(c.prompt_token_ids, t), content, tokenLogprobs };
}

/** A copy without `drop`'s keys (built, not deleted from: deleting makes V8 objects slow on every later access). */
export function strip(o: Obj, drop: ReadonlySet<string>): Obj {
  const out: Obj = {};
  for (const k in o) if (!drop.has(k)) out[k] = o[k];
  return out;
}

/**
 * The text without the members named in `drop` (`top` for the top-level object, `choice` for each choice), and with
 * the top-level `model` value replaced when `model` is given. A cut member takes the comma before it when a kept
 * member precedes it, else the comma after it, so the text stays valid JSON.
 */
export function cutMembers(
  bytes: Buffer,
  members: FieldMember[][],
  drop: { top: ReadonlySet<string>; choice: ReadonlySet<string> },
  model?: string,
): Buffer {
  const spans: [number, number, string][] = [];
  members.forEach((list, o) => {
    const names = o === 0 ? drop.top : drop.choice;
    let keptEnd = -1;
    list.forEach((m, k) => {
      if (o === 0 && m.name === 'model' && model !== undefined) spans.push([m.valueStart, m.valueEnd, model]);
      if (!names.has(m.name)) {
        keptEnd = m.valueEnd;
        return;
      }
      if (keptEnd !== -1) spans.push([keptEnd, m.valueEnd, '']);
      else spans.push([m.keyStart, k + 1 < list.length ? list[k + 1].keyStart : m.valueEnd, '']);
    });
  });
  if (spans.length === 0) return bytes;
  spans.sort((a, b) => a[0] - b[0]);
  const parts: Buffer[] = [];
  let at = 0;
  for (const [from, to, put] of spans) {
    parts.push(bytes.subarray(at, from));
    if (put) parts.push(Buffer.from(put));
    at = to;
  }
  parts.push(bytes.subarray(at));
  return Buffer.concat(parts);
}
