import { once } from 'node:events';
import { createWriteStream, openSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { AlightError, ExitCode } from '../src/errors.js';
import type { RolloutSummary, Store } from '../src/store/store.js';
import { type RolloutTrace, rolloutTrace } from '../src/traces/export.js';
import { printable, table } from '../src/ui/summary.js';
import { printJson, withStore } from './shared.js';

const times = (counts: Map<string, number>): string =>
  [...counts].map(([k, n]) => (n > 1 ? `${k} ×${n}` : k)).join(', ');

function count(keys: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
  return counts;
}

/** The rollout's events by type, and the routes it asked for that the gateway does not serve (why it made no call). */
function eventLine(events: { type: string; data: string }[]): string {
  if (!events.length) return '';
  const unserved = events
    .filter((e) => e.type === 'unserved-route')
    .map((e) => {
      const { method, path } = JSON.parse(e.data) as { method: string; path: string };
      return printable(`${method} ${path}`);
    });
  const untranslated = events
    .filter((e) => e.type === 'untranslated')
    .map((e) => {
      const { kind, names } = JSON.parse(e.data) as { kind: string; names: string[] };
      return printable(`${kind} ${names.join(', ')}`);
    });
  return (
    `\nevents: ${times(count(events.map((e) => e.type)))}` +
    (unserved.length ? `\nroutes the gateway does not serve: ${times(count(unserved))}` : '') +
    (untranslated.length
      ? `\nleft out when translating for the upstream (it cannot run them): ${untranslated.join('; ')}`
      : '')
  );
}

const seconds = (r: RolloutSummary): string =>
  r.started_at && r.ended_at ? `${((r.ended_at - r.started_at) / 1000).toFixed(1)}s` : '–';

export async function listTraces(opts: { run?: string; db?: string; json?: boolean }): Promise<RolloutSummary[]> {
  return withStore(opts, (store) => {
    const rows = store.rolloutSummaries({ run: opts.run });
    if (opts.json) printJson(rows);
    else if (rows.length === 0)
      process.stdout.write(`no rollouts${opts.run ? ` in run ${opts.run}` : ''} in ${store.path}\n`);
    else {
      process.stdout.write(
        `${table(
          ['rollout', 'run', 'task', 'state', 'reward', 'calls', 'tokens', 'time', 'error'],
          rows.map((r) => [
            r.id,
            r.run,
            r.task_id ?? '-',
            r.state,
            r.reward ?? '–',
            r.calls,
            r.prompt_tokens + r.completion_tokens,
            seconds(r),
            (r.error ?? '').slice(0, 60),
          ]),
        )}\n`,
      );
    }
    return rows;
  });
}

export async function showTrace(
  id: string,
  opts: { db?: string; json?: boolean; call?: number },
): Promise<RolloutTrace> {
  return withStore(opts, (store) => {
    const trace = rolloutTrace(store, id);
    if (opts.call !== undefined) showCall(trace, opts.call, opts.json === true);
    else if (opts.json) printJson(trace);
    else {
      const t = trace;
      process.stdout.write(
        `rollout ${t.rollout_id}  run ${t.run}  task ${t.task_id ?? '-'}  ${t.state}` +
          `${t.exit_code !== null ? ` (exit ${t.exit_code})` : ''}  reward ${t.reward ?? '–'}` +
          `${t.error ? `\nerror: ${t.error}` : ''}\n` +
          t.rewards.map((w) => `  ${w.source} ${w.value}${w.reason ? `: ${oneLine(w.reason)}` : ''}\n`).join('') +
          judgeCallLines(store, t.run, id) +
          `stored: ${store.calls.storedBytes(id)} bytes${eventLine(store.events(id))}\n\n`,
      );
      process.stdout.write(
        `${table(
          ['seq', 'protocol', 'stream', 'status', 'prompt', 'completion', 'finish', 'ms', 'version', 'error'],
          t.calls.map((c) => [
            c.seq,
            c.protocol,
            c.stream ? 'yes' : 'no',
            c.status,
            c.prompt_token_ids?.length ?? '–',
            c.completion_token_ids?.length ?? '–',
            c.finish_reason ?? '–',
            Math.round(c.latency_ms),
            c.model_version ?? '–',
            (c.error ?? '').slice(0, 50),
          ]),
        )}\n`,
      );
    }
    return trace;
  });
}

// The text view names the tools and cuts long texts (system prompts, tool outputs); --json has them whole.
const shownChars = 400;
function cut(key: string, value: unknown): unknown {
  if (key === 'tools' && Array.isArray(value)) {
    return value.map(
      (t: { name?: string; type?: string; function?: { name?: string } }) => t.name ?? t.function?.name ?? t.type,
    );
  }
  return typeof value === 'string' && value.length > shownChars
    ? `${value.slice(0, shownChars)}… (${value.length - shownChars} more characters)`
    : value;
}

/**
 * One call's sides. Recorded text is shown as JSON, so control characters a model or harness wrote are escaped,
 * never sent to the terminal.
 */
function showCall(trace: RolloutTrace, seq: number, json: boolean): void {
  const call = trace.calls.find((c) => c.seq === seq);
  if (!call)
    throw new AlightError(
      `rollout ${trace.rollout_id} has no call ${seq} (its calls: 0–${trace.calls.length - 1})`,
      ExitCode.input,
    );
  if (json) {
    printJson(call);
    return;
  }
  const sides: [string, unknown][] = call.harness
    ? [
        [`the harness's request (${call.protocol})`, call.harness.request],
        ['the answer it got', call.harness.response],
        ['translated: the chat/completions request sent upstream', call.request],
        ['the chat answer', call.response],
      ]
    : [
        [`the request (${call.protocol})`, call.request],
        ['the answer', call.response],
      ];
  const head =
    `call ${call.seq} of ${trace.rollout_id}: ${call.status}${call.error ? ` (${call.error})` : ''}, ` +
    `${call.prompt_token_ids?.length ?? '–'} prompt and ` +
    `${call.completion_token_ids?.length ?? '–'} completion tokens\n`;
  process.stdout.write(
    head + sides.map(([title, value]) => `\n── ${title}\n${JSON.stringify(value, cut, 2)}\n`).join(''),
  );
}

function openOut(path: string): number {
  try {
    return openSync(path, 'w');
  } catch (err) {
    throw new AlightError(`cannot write ${path}: ${(err as Error).message}`, ExitCode.input);
  }
}

export async function exportTraces(opts: { run?: string; out?: string; db?: string }): Promise<number> {
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

/** A reward's reason (a judge's explanation, a harness's note) on one line of the listing: recorded text, shown as text. */
const oneLine = (text: string): string => JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text);

/** The judge's calls that judged the rollout (stored apart from its own calls): tokens, time, what went wrong. */
function judgeCallLines(store: Store, run: string, id: string): string {
  return store.judge
    .calls(run, id)
    .map(
      (c) =>
        `  judge call (${c.model}): ${c.promptTokens ?? '–'} + ${c.completionTokens ?? '–'} tokens, ` +
        `${Math.round(c.ms)} ms${c.problem ? `: ${c.problem}` : ''}\n`,
    )
    .join('');
}
