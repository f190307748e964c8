import type { RecordSummary } from '../runner/summary.js';
import { formatCount } from './progress.js';

/** Recorded text (written by a model or a harness) made safe for a terminal: control characters shown escaped. */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it escapes
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function table(header: string[], rows: (string | number)[][]): string {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  return cells
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

const fmt = (v: number | null): string => (v === null ? '–' : v.toFixed(3));

export function renderRecordSummary(s: RecordSummary): string {
  const lines = [
    `run ${s.run}${s.interrupted ? ' (interrupted)' : ''}: ${s.rollouts} rollouts, ` +
      `${s.succeeded} succeeded, ${s.failed} failed, ` +
      `${s.calls} calls${s.error_calls ? ` (${s.error_calls} errors)` : ''}, ` +
      `${formatCount(s.prompt_tokens)} prompt + ` +
      `${formatCount(s.completion_tokens)} completion tokens, mean reward ${fmt(s.mean_reward)}, ${s.elapsed_s}s`,
  ];
  if (s.run_rollouts > s.rollouts)
    lines.push(`the run now holds ${s.run_rollouts} rollouts: --run ${s.run} was used before, and this added to it`);
  if (s.tasks.length > 1 || s.tasks[0]?.task_id !== null) {
    lines.push(
      '',
      table(
        ['task', 'rollouts', 'ok', 'failed', 'calls', 'mean reward'],
        s.tasks.map((t) => [t.task_id ?? '-', t.rollouts, t.succeeded, t.failed, t.calls, fmt(t.mean_reward)]),
      ),
    );
  }
  if (s.failures.length) {
    lines.push(
      '',
      'failures:',
      ...s.failures.slice(0, 10).map((f) => `  ${f.rollout_id} ${f.task_id ?? ''} ${f.error ?? ''}`),
    );
    if (s.failures.length > 10) lines.push(`  … ${s.failures.length - 10} more (alight traces list --run ${s.run})`);
  }
  lines.push('', `traces: alight traces export --run ${s.run} --db ${s.db}`);
  return lines.join('\n');
}
