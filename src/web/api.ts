import { groupedTrain } from '../config/old-keys.js';
import { type Params, Router } from '../http.js';
import type { Detokenize } from '../samples/diagnose.js';
import type { StoredCall } from '../store/calls.js';
import type { RolloutSummary, Store } from '../store/store.js';
import type { BreakCounts } from './breaks.js';
import { comparison, evalRun, testLog } from './eval-files.js';
import { exampleRows, examplesPage } from './examples.js';
import { advantagesIn, rulesOf } from './groups.js';
import { rolloutRows } from './rows.js';
import type { TrainedRows } from './trained.js';

/** A JSON answer, or null for a path the API does not have (404). */
export type ApiAnswer = { status: number; body: unknown } | null;

const pageMax = 200;

/** What the API keeps between requests: the tokenizer per run, break counts, which step trained which rollout. */
export interface ApiContext {
  tokenizerFor: (run: string) => Promise<Detokenize | null>;
  breaks: BreakCounts;
  trained: TrainedRows;
}

/** The rollouts page's filters. */
export const rolloutFilters = ['failed', 'zero-variance', 'breaks'] as const;

/**
 * `alight ui`'s read-only API over the store: the runs; a run with its settings and steps (`?after=N`: only later
 * steps, for a page that follows a live run); a page of its rollouts (`?offset&limit&filter`); one rollout's calls as
 * the harness sent and received them, and its training rows token by token (rows.ts; decoded with `tokenizerFor`'s
 * tokenizer for the run, when there is one). Everything returned is data: the page renders it as text.
 */
export async function answer(store: Store, path: string, query: URLSearchParams, ctx: ApiContext): Promise<ApiAnswer> {
  const found = routes.find('GET', path);
  return found ? found.handler({ store, query, ctx, params: found.params }) : null;
}

/** One API request: the store, the query, what the API keeps, the route's parameters. */
interface ApiCall {
  store: Store;
  query: URLSearchParams;
  ctx: ApiContext;
  params: Params;
}

const routes = new Router<(c: ApiCall) => ApiAnswer | Promise<ApiAnswer>>()
  .get('/api/runs', ({ store }) => ok(store.listRuns()))
  .get('/api/runs/{run}', ({ store, params, query }) => run(store, params.run, Number(query.get('after') ?? -1)))
  .get('/api/runs/{run}/rollouts', ({ store, params, query, ctx }) => rollouts(store, params.run, query, ctx.breaks))
  .get('/api/runs/{run}/eval', ({ store, params }) =>
    found(evalRun(store, params.run), `eval files for run ${params.run}`),
  )
  .get('/api/runs/{run}/eval/{instance}/{attempt}', ({ store, params }) =>
    found(testLog(store, params.run, params.instance, Number(params.attempt)), 'test log'),
  )
  .get('/api/runs/{run}/examples', ({ store, params, query }) => {
    const { offset, limit } = pageOf(query);
    return readable(examplesPage(store, params.run, offset, limit), `examples of an sft run ${params.run}`);
  })
  .get('/api/runs/{run}/examples/{index}', async ({ store, params, ctx }) => {
    const rows = exampleRows(store, params.run, Number(params.index), await ctx.tokenizerFor(params.run));
    return readable(rows, `examples of an sft run ${params.run}`);
  })
  .get('/api/compare/{a}/{b}', ({ store, params: { a, b } }) =>
    found(comparison(store, a, b), `eval summaries for ${a} and ${b}`),
  )
  .get('/api/rollouts/{id}', ({ store, params }) => rollout(store, params.id))
  .get('/api/rollouts/{id}/rows', async ({ store, params, ctx }) => {
    const run = store.getRollout(params.id)?.run;
    const rows = run === undefined ? null : rolloutRows(store, params.id, await ctx.tokenizerFor(run), ctx.trained);
    return rows ? ok(rows) : missing(`rollout ${params.id}`);
  });

const ok = (body: unknown): ApiAnswer => ({ status: 200, body });
const missing = (what: string): ApiAnswer => ({ status: 404, body: { error: `no ${what}` } });
const found = (body: unknown, what: string): ApiAnswer => (body === null ? missing(what) : ok(body));
/** found(), with a reason the store's data cannot be shown (a file gone, an index past the end) as a 404 of its own. */
const readable = (body: object | null, what: string): ApiAnswer =>
  body !== null && 'error' in body ? { status: 404, body } : found(body, what);
const pageOf = (query: URLSearchParams) => ({
  limit: Math.min(pageMax, Math.max(1, Number(query.get('limit') ?? 50) || 50)),
  offset: Math.max(0, Number(query.get('offset') ?? 0) || 0),
});

function run(store: Store, name: string, after: number): ApiAnswer {
  const row = store.getRun(name);
  if (!row) return missing(`run ${name}`);
  const steps = store.trainSteps(name).filter((s) => s.step > after);
  // As stored, in today's spelling: a run stored before train's keys were grouped shows them in their groups.
  const config = row.config ? (JSON.parse(row.config) as Record<string, unknown>) : null;
  if (config?.train) config.train = groupedTrain(config.train).train;
  return ok({ ...row, config, steps });
}

/** A page of a run's rollouts, filtered, each with its advantage in its group and its merge breaks. */
function rollouts(store: Store, name: string, query: URLSearchParams, breaks: BreakCounts): ApiAnswer {
  if (!store.getRun(name)) return missing(`run ${name}`);
  const filter = query.get('filter') || undefined;
  if (filter !== undefined && !(rolloutFilters as readonly string[]).includes(filter))
    return { status: 400, body: { error: `unknown filter ${filter} (one of ${rolloutFilters.join(', ')})` } };
  const { limit, offset } = pageOf(query);
  const rules = rulesOf(store, name);
  let total: number;
  let rows: RolloutSummary[];
  if (filter === 'breaks') {
    // Breaks come from merging each rollout's calls, which SQL cannot do: the ids first, then the page's summaries.
    const ids = breaks.withBreaks(name);
    total = ids.length;
    rows = store.rolloutSummaries({ ids: ids.slice(offset, offset + limit) });
  } else {
    const where = {
      run: name,
      state: filter === 'failed' ? 'failed' : undefined,
      zeroVariance: filter === 'zero-variance' ? rules.group : undefined,
    };
    total = store.countRollouts(where);
    rows = store.rolloutSummaries({ ...where, limit, offset });
  }
  const advantages = advantagesIn(
    store,
    name,
    rows.flatMap((r) => r.group_id ?? []),
    rules,
  );
  return ok({
    total,
    offset,
    rows: rows.map((r) => ({ ...r, advantage: advantages.get(r.id) ?? null, breaks: breaks.of(r) })),
  });
}

function rollout(store: Store, id: string): ApiAnswer {
  const [summary] = store.rolloutSummaries({ ids: [id] });
  if (!summary) return missing(`rollout ${id}`);
  return ok({
    ...summary,
    rewards: store.rewards(id),
    calls: store.calls.list(id).map(callView),
    events: store.events(id),
  });
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
