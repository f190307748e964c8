import type { UpstreamKind } from '../../config/schema.js';
import { errorBody } from '../../http.js';
import { sseData } from '../sse.js';
import type { HarnessView } from './types.js';

type Obj = Record<string, unknown>;

/** What the harness asked for of the fields the gateway adds to a vLLM request. */
export interface Asked {
  tokenIds: boolean;
  logprobs: boolean;
}

const idFields = ['prompt_token_ids', 'token_ids'];
const logprobFields = ['logprobs', 'prompt_logprobs'];

/** A copy without `drop`'s keys (built, not deleted from: deleting makes V8 objects slow on every later access). */
function without(o: Obj, drop: Set<string>): Obj {
  const out: Obj = {};
  for (const k in o) if (!drop.has(k)) out[k] = o[k];
  return out;
}

/** The answer as the harness asked for it: its model name, and only the token fields it asked for. */
function reshaper(model: unknown, asked: Asked): (answer: Obj) => Obj {
  const drop = new Set([...(asked.tokenIds ? [] : idFields), ...(asked.logprobs ? [] : logprobFields)]);
  return (answer) => {
    const out = drop.size ? without(answer, drop) : { ...answer };
    if (typeof model === 'string' && 'model' in out) out.model = model;
    if (drop.size && Array.isArray(out.choices)) out.choices = out.choices.map((c: Obj) => without(c, drop));
    return out;
  };
}

/**
 * The view of an OpenAI protocol relayed to the harness: the upstream's bytes unchanged where nothing differs from
 * what the harness asked for, else each answer reshaped (`extra` applies a protocol's own rewrite after that).
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
  const rewrite = added || renamed ? reshaper(harness.model, asked) : null;
  const change = extra ? (a: Obj): Obj => extra(rewrite ? rewrite(a) : a) : rewrite;
  return {
    whole: (answer) => (change ? change(answer) : null),
    event: (raw, chunk) => (change && !chunk.error ? `data: ${JSON.stringify(change(chunk))}\n\n` : raw),
    end: (sawDone) => (sawDone ? 'data: [DONE]\n\n' : ''),
    broken: (message) => sseData(errorBody(502, message, 'upstream_error')),
  };
}
