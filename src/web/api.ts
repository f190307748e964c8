import type { Detokenize } from '../samples/diagnose.js';
import type { StoredCall } from '../store/calls.js';
import type { Store } from '../store/store.js';
import { comparison, evalRun, testLog } from './eval-files.js';
import { rolloutRows } from './rows.js';

/** A JSON answer, or null for a path the API does not have (404). */
export type ApiAnswer = { status: number; body: unknown } | null;

const pageMax = 200;

/**
 * `alight ui`'s read-only API over the store: the runs; a run with its settings and steps (`?after=N`: only later
 * steps, for a page that follows a live run); a page of its rollouts (`?offset&limit&state`); one rollout's calls as
 * the harness sent and received them, and its training rows token by token (rows.ts; decoded with `tokenizerFor`'s
 * tokenizer for the run, when there is one). Everything returned is data: the page renders it as text.
 */
export async function answer(
  store: Store,
  path: string,
  query: URLSearchParams,
  tokenizerFor: (run: string) => Promise<Detokenize | null> = async () => null,
): Promise<ApiAnswer> {
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] !== 'api') return null;
  if (parts[1] === 'runs' && parts.length === 2) return ok(store.listRuns());
  if (parts[1] === 'runs' && parts.length === 3) return run(store, parts[2], Number(query.get('after') ?? -1));
  if (parts[1] === 'runs' && parts[3] === 'rollouts' && parts.length === 4) return rollouts(store, parts[2], query);
  if (parts[1] === 'runs' && parts[3] === 'eval' && parts.length === 4)
    return found(evalRun(store, parts[2]), `eval files for run ${parts[2]}`);
  if (parts[1] === 'runs' && parts[3] === 'eval' && parts.length === 6)
    return found(testLog(store, parts[2], parts[4], Number(parts[5])), 'test log');
  if (parts[1] === 'compare' && parts.length === 4)
    return found(comparison(store, parts[2], parts[3]), `eval summaries for ${parts[2]} and ${parts[3]}`);
  if (parts[1] === 'rollouts' && parts.length === 3) return rollout(store, parts[2]);
  if (parts[1] === 'rollouts' && parts[3] === 'rows' && parts.length === 4) {
    const run = store.getRollout(parts[2])?.run;
    const rows = run === undefined ? null : rolloutRows(store, parts[2], await tokenizerFor(run));
    return rows ? ok(rows) : missing(`rollout ${parts[2]}`);
  }
  return null;
}

const ok = (body: unknown): ApiAnswer => ({ status: 200, body });
const missing = (what: string): ApiAnswer => ({ status: 404, body: { error: `no ${what}` } });
const found = (body: unknown, what: string): ApiAnswer => (body === null ? missing(what) : ok(body));

function run(store: Store, name: string, after: number): ApiAnswer {
  const row = store.getRun(name);
  if (!row) return missing(`run ${name}`);
  const steps = store.trainSteps(name).filter((s) => s.step > after);
  return ok({ ...row, config: row.config ? JSON.parse(row.config) : null, steps });
}

function rollouts(store: Store, name: string, query: URLSearchParams): ApiAnswer {
  if (!store.getRun(name)) return missing(`run ${name}`);
  const state = query.get('state') || undefined;
  const limit = Math.min(pageMax, Math.max(1, Number(query.get('limit') ?? 50) || 50));
  const offset = Math.max(0, Number(query.get('offset') ?? 0) || 0);
  return ok({
    total: store.countRollouts({ run: name, state }),
    offset,
    rows: store.rolloutSummaries({ run: name, state, limit, offset }),
  });
}

function rollout(store: Store, id: string): ApiAnswer {
  const [summary] = store.rolloutSummaries({ ids: [id] });
  if (!summary) return missing(`rollout ${id}`);
  return ok({ ...summary, calls: store.calls.list(id).map(callView), events: store.events(id) });
}

/** A call as the page shows it: what the harness sent and got, and the numbers; token ids only counted. */
function callView(c: StoredCall) {
  return {
    seq: c.seq,
    protocol: c.protocol,
    stream: c.stream,
    status: c.status,
    error: c.error,
    latencyMs: c.latencyMs,
    promptTokens: c.promptTokens,
    completionTokens: c.completionTokens,
    finishReason: c.finishReason,
    modelVersion: c.modelVersion,
    request: c.harness?.request ?? c.request,
    response: c.harness ? c.harness.response : c.response,
  };
}
