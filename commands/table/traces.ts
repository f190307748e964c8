import type { Command } from 'commander';
import {
  type RunShowFlags,
  type RunsListFlags,
  runShowFlags,
  runsListFlags,
  type TraceShowFlags,
  type TracesExportFlags,
  type TracesListFlags,
  traceShowFlags,
  tracesExportFlags,
  tracesListFlags,
  type UiFlags,
  uiFlags,
} from './declared-traces.js';
import { define, group } from './define.js';

export function registerTraces(program: Command): void {
  const traces = group(program, 'traces', 'list, show and export recorded rollouts');
  define(traces, {
    name: 'list',
    description: 'one line per rollout',
    options: tracesListFlags(),
    examples: ['alight traces list --run rec-20261130-120000'],
    action: async (opts: TracesListFlags) => (await import('../traces.js')).listTraces(opts),
  });
  define(traces, {
    name: 'show',
    description: 'one rollout and its calls',
    args: [['<rollout>', 'rollout id']],
    options: traceShowFlags(),
    examples: ['alight traces show ro_0123456789abcdef', 'alight traces show ro_0123456789abcdef --call 3'],
    action: async (id: string, opts: TraceShowFlags) => (await import('../traces.js')).showTrace(id, opts),
  });
  define(traces, {
    name: 'export',
    description: 'write rollouts as JSONL, one object per rollout (docs/design.md#trace-export)',
    options: tracesExportFlags(),
    examples: ['alight traces export --run my-run --out traces.jsonl'],
    action: async (opts: TracesExportFlags) => (await import('../traces.js')).exportTraces(opts),
  });
}

export function registerRuns(program: Command): void {
  const runs = group(program, 'runs', 'recorded and training runs');
  define(runs, {
    name: 'list',
    description: 'one line per run',
    options: runsListFlags(),
    examples: ['alight runs list'],
    action: async (opts: RunsListFlags) => (await import('../runs.js')).listRuns(opts),
  });
  define(runs, {
    name: 'show',
    description: "a training run's metrics per step; --plot writes reward, loss and entropy curves",
    args: [['<run>', 'the run']],
    options: runShowFlags(),
    examples: ['alight runs show my-run --plot curves.svg'],
    action: async (run: string, opts: RunShowFlags) => (await import('../runs.js')).showRun(run, opts),
  });
}

export function registerUi(program: Command): void {
  define(program, {
    name: 'ui',
    description:
      'a local web page over the store (read-only, 127.0.0.1): runs, training curves (live), rollouts, conversations',
    options: uiFlags(),
    examples: ['alight ui', 'alight ui --port 8765 --db runs/alight.db'],
    action: async (opts: UiFlags) => (await import('../ui.js')).uiCommand(opts),
  });
}
