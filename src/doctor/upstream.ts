import { errorMessage } from '../errors.js';

/** One finding about an upstream: what was checked, whether it holds, and what to do when it does not. */
export interface Check {
  name: string;
  ok: boolean | null;
  detail: string;
}

type Obj = Record<string, unknown>;

async function call(
  url: string,
  apiKey: string | undefined,
  path: string,
  body?: Obj,
): Promise<{ status: number; json: Obj | null }> {
  const res = await fetch(`${url}${path}`, {
    method: body ? 'POST' : 'GET',
    headers: { 'content-type': 'application/json', ...(apiKey && { authorization: `Bearer ${apiKey}` }) },
    body: body && JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  try {
    return { status: res.status, json: JSON.parse(text) as Obj };
  } catch {
    return { status: res.status, json: null };
  }
}

/**
 * The logprobs of the two likeliest tokens, sampling with top_k 1: processed, the first is 0 and the second minus
 * infinity (vLLM writes -9999); raw, both are the model's (the second finite, whatever the model's confidence).
 */
async function topTwoLogprobs(url: string, key: string | undefined, model: string): Promise<number[] | null> {
  const { json } = await call(url, key, '/v1/chat/completions', {
    model,
    messages: [{ role: 'user', content: 'Say hello.' }],
    max_tokens: 1,
    top_k: 1,
    logprobs: true,
    top_logprobs: 2,
  });
  const first = (
    (json?.choices as Obj[] | undefined)?.[0]?.logprobs as
      | { content?: { top_logprobs: { logprob: number }[] }[] }
      | undefined
  )?.content?.[0];
  const lps = first?.top_logprobs?.map((t) => t.logprob) ?? [];
  return lps.length === 2 ? lps : null;
}

/**
 * What alight can check of a vLLM it did not start: that it answers (/version, /v1/models), returns the token ids
 * training stores (return_token_ids), and reports the logprobs of the sampling distribution (--logprobs-mode
 * processed_logprobs): with top_k 1 the sampled token's processed logprob is 0, its raw logprob is not.
 */
export async function checkUpstream(url: string, apiKey?: string): Promise<Check[]> {
  const root = url.replace(/\/v1\/?$/, '');
  const checks: Check[] = [];
  try {
    const version = await call(root, apiKey, '/version');
    checks.push({
      name: 'vLLM version',
      ok: version.status === 200 && typeof version.json?.version === 'string',
      detail:
        typeof version.json?.version === 'string'
          ? String(version.json.version)
          : `GET /version answered ${version.status}: not vLLM?`,
    });
    const models = await call(root, apiKey, '/v1/models');
    const model = ((models.json?.data as Obj[] | undefined)?.[0]?.id as string | undefined) ?? null;
    checks.push({
      name: 'models',
      ok: model !== null,
      detail:
        model ??
        'GET /v1/models answered ' +
          `${models.status}${models.status === 401 ? ' (set the API key: --upstream-key-env)' : ''}`,
    });
    if (!model) return checks;
    const { json } = await call(root, apiKey, '/v1/chat/completions', {
      model,
      messages: [{ role: 'user', content: 'Say hello.' }],
      max_tokens: 2,
      return_token_ids: true,
      logprobs: true,
    });
    const choice = (json?.choices as Obj[] | undefined)?.[0];
    const ids = Array.isArray(json?.prompt_token_ids) && Array.isArray(choice?.token_ids);
    checks.push({
      name: 'token ids',
      ok: ids,
      detail: ids
        ? 'prompt_token_ids and token_ids returned'
        : 'no prompt_token_ids/token_ids: vLLM 0.10.2 or newer is needed (return_token_ids)',
    });
    const top = await topTwoLogprobs(root, apiKey, model);
    const processed = top !== null && Math.abs(top[0]) < 1e-4 && top[1] < -1000;
    checks.push({
      name: 'logprobs mode',
      ok: top === null ? null : processed,
      detail:
        top === null
          ? 'no top logprobs returned: cannot tell'
          : processed
            ? 'processed_logprobs (the sampling distribution)'
            : `raw logprobs (a top_k 1 sample reports ${top[1].toFixed(3)} for the token ` +
              'it could not sample): start vLLM with --logprobs-mode processed_logprobs',
    });
  } catch (err) {
    checks.push({ name: 'reachable', ok: false, detail: `${url}: ${errorMessage(err)}` });
  }
  return checks;
}
