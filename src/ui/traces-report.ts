import type { StoredJudgeCall } from '../store/judge.js';
import type { EventRow, RolloutSummary } from '../store/store.js';
import type { CallTrace, RolloutTrace } from '../traces/export.js';
import { printable, table } from './summary.js';

/** What `alight traces show` tells of a rollout beyond its trace: the judge's calls, the bytes stored, its events. */
export interface TraceExtras {
  judgeCalls: StoredJudgeCall[];
  storedBytes: number;
  events: Pick<EventRow, 'type' | 'data'>[];
}

const times = (counts: Map<string, number>): string =>
  [...counts].map(([k, n]) => (n > 1 ? `${k} ×${n}` : k)).join(', ');

function count(keys: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
  return counts;
}

/** The rollout's events by type, and the routes it asked for that the gateway does not serve (why it made no call). */
function eventLine(events: TraceExtras['events']): string {
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

/** `alight traces list`: one line per rollout. */
export function renderTraceList(rows: RolloutSummary[]): string {
  return `${table(
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
  )}\n`;
}

/** A reward's reason (a judge's explanation, a harness's note) on one line of the listing: recorded text, shown as text. */
const oneLine = (text: string): string => JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text);

/** The judge's calls that judged the rollout (stored apart from its own calls): tokens, time, what went wrong. */
const judgeCallLines = (calls: StoredJudgeCall[]): string =>
  calls
    .map(
      (c) =>
        `  judge call (${c.model}): ${c.promptTokens ?? '–'} + ${c.completionTokens ?? '–'} tokens, ` +
        `${Math.round(c.ms)} ms${c.problem ? `: ${c.problem}` : ''}\n`,
    )
    .join('');

/** `alight traces show <rollout>`: how it ended, its rewards and events, then a line per call. */
export function renderTrace(t: RolloutTrace, x: TraceExtras): string {
  return (
    `rollout ${t.rollout_id}  run ${t.run}  task ${t.task_id ?? '-'}  ${t.state}` +
    `${t.exit_code !== null ? ` (exit ${t.exit_code})` : ''}  reward ${t.reward ?? '–'}` +
    `${t.error ? `\nerror: ${t.error}` : ''}\n` +
    t.rewards.map((w) => `  ${w.source} ${w.value}${w.reason ? `: ${oneLine(w.reason)}` : ''}\n`).join('') +
    judgeCallLines(x.judgeCalls) +
    `stored: ${x.storedBytes} bytes${eventLine(x.events)}\n\n` +
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
    )}\n`
  );
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
 * `alight traces show <rollout> --call N`: the call's sides. Recorded text is shown as JSON, so control characters a
 * model or harness wrote are escaped, never sent to the terminal.
 */
export function renderCall(rolloutId: string, call: CallTrace): string {
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
    `call ${call.seq} of ${rolloutId}: ${call.status}${call.error ? ` (${call.error})` : ''}, ` +
    `${call.prompt_token_ids?.length ?? '–'} prompt and ` +
    `${call.completion_token_ids?.length ?? '–'} completion tokens\n`;
  return head + sides.map(([title, value]) => `\n── ${title}\n${JSON.stringify(value, cut, 2)}\n`).join('');
}
