import type { UpstreamKind } from '../../config/schema.js';
import { errorBody } from '../../http.js';
import { sseData } from '../sse.js';
import { stringifyBareNumbers } from './python-json.js';
import { cutMembers, idFields, logprobFields, parseObject, type ScannedAnswer, strip } from './token-fields.js';
import type { HarnessView } from './types.js';

type Obj = Record<string, unknown>;

/** What the harness asked for of the fields the gateway adds to a vLLM request. */
export interface Asked {
  tokenIds: boolean;
  logprobs: boolean;
}

/** The answer as the harness asked for it: its model name, and none of the token fields in `drop`. */
function reshaper(model: unknown, drop: ReadonlySet<string>): (answer: Obj) => Obj {
  return (answer) => {
    const out = drop.size ? strip(answer, drop) : { ...answer };
    if (typeof model === 'string' && 'model' in out) out.model = model;
    if (drop.size && Array.isArray(out.choices)) out.choices = out.choices.map((c: Obj) => strip(c, drop));
    return out;
  };
}

/**
 * The view of an OpenAI protocol relayed to the harness: the upstream's bytes unchanged where nothing differs from
 * what the harness asked for; else the fields it did not ask for cut out of the bytes (and its model name put in),
 * or, for an answer that was parsed whole or a protocol's own rewrite (`extra`), the answer reshaped and serialised.
 */
export function relayView(
  harness: Obj,
  upstream: Obj,
  kind: UpstreamKind,
  asked: Asked,
  extra?: (answer: Obj) => Obj,
): HarnessView {
  const added = kind === 'vllm' && (!asked.tokenIds || !asked.logprobs);
  const renamed = typeof harness.model === 'string' && harness.model !== upstream.model;
  const unasked = new Set([...(asked.tokenIds ? [] : idFields), ...(asked.logprobs ? [] : logprobFields)]);
  const rewrite = added || renamed ? reshaper(harness.model, unasked) : null;
  const change = extra ? (a: Obj): Obj => extra(rewrite ? rewrite(a) : a) : rewrite;
  const drop = { top: unasked, choice: unasked };
  const model = renamed ? JSON.stringify(harness.model) : undefined;
  const reshape = (a: ScannedAnswer): Buffer | string => {
    if (a.members && a.bytes && !extra) return cutMembers(a.bytes, a.members, drop, model);
    const answer = change!(a.parsed ?? parseObject(String(a.bytes)).value);
    return a.bare ? stringifyBareNumbers(answer) : JSON.stringify(answer);
  };
  return {
    whole: (answer) => (change ? reshape(answer) : null),
    event: (raw, chunk) => (change && !chunk.body.error ? `data: ${reshape(chunk)}\n\n` : raw),
    end: (sawDone) => (sawDone ? 'data: [DONE]\n\n' : ''),
    broken: (message) => sseData(errorBody(502, message, 'upstream_error')),
  };
}
