import { once } from 'node:events';
import { createWriteStream, openSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { AlightError, ExitCode } from '../src/errors.js';
import type { RolloutSummary } from '../src/store/store.js';
import { type RolloutTrace, rolloutTrace } from '../src/traces/export.js';
import { renderCall, renderTrace, renderTraceList } from '../src/ui/traces-report.js';
import { printJson, withStore } from './shared.js';
import type { TraceShowFlags, TracesExportFlags, TracesListFlags } from './table/declared-traces.js';

export async function listTraces(opts: TracesListFlags): Promise<RolloutSummary[]> {
  return withStore(opts, (store) => {
    const rows = store.rolloutSummaries({ run: opts.run });
    if (opts.json) printJson(rows);
    else if (rows.length === 0)
      process.stdout.write(`no rollouts${opts.run ? ` in run ${opts.run}` : ''} in ${store.path}\n`);
    else process.stdout.write(renderTraceList(rows));
    return rows;
  });
}

export async function showTrace(id: string, opts: TraceShowFlags): Promise<RolloutTrace> {
  return withStore(opts, (store) => {
    const trace = rolloutTrace(store, id);
    if (opts.call !== undefined) showCall(trace, opts.call, opts.json === true);
    else if (opts.json) printJson(trace);
    else
      process.stdout.write(
        renderTrace(trace, {
          judgeCalls: store.judge.calls(trace.run, id),
          storedBytes: store.calls.storedBytes(id),
          events: store.events(id),
        }),
      );
    return trace;
  });
}

/** One call's sides: as JSON, or as text (see renderCall). */
function showCall(trace: RolloutTrace, seq: number, json: boolean): void {
  const call = trace.calls.find((c) => c.seq === seq);
  if (!call)
    throw new AlightError(
      `rollout ${trace.rollout_id} has no call ${seq} (its calls: 0–${trace.calls.length - 1})`,
      ExitCode.input,
    );
  if (json) printJson(call);
  else process.stdout.write(renderCall(trace.rollout_id, call));
}

function openOut(path: string): number {
  try {
    return openSync(path, 'w');
  } catch (err) {
    throw new AlightError(`cannot write ${path}: ${(err as Error).message}`, ExitCode.input);
  }
}

export async function exportTraces(opts: TracesExportFlags): Promise<number> {
  return withStore(opts, async (store) => {
    if (opts.run && !store.getRun(opts.run))
      throw new AlightError(`no run ${opts.run} in ${store.path} (alight runs list)`, ExitCode.input);
    const out: Writable = opts.out ? createWriteStream('', { fd: openOut(opts.out) }) : process.stdout;
    const ids = store.rolloutSummaries({ run: opts.run }).map((r) => r.id);
    for (const id of ids) {
      if (!out.write(`${JSON.stringify(rolloutTrace(store, id))}\n`)) await once(out, 'drain');
    }
    if (opts.out) {
      out.end();
      await once(out, 'finish');
      process.stderr.write(`alight: wrote ${ids.length} rollout(s) to ${opts.out}\n`);
    }
    return ids.length;
  });
}
