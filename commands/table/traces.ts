import { type Command, Option } from 'commander';
import { configOption, int, jsonOption, runOption, storeOptions } from '../options.js';
import type { listRuns, showRun } from '../runs.js';
import type { exportTraces, listTraces, showTrace } from '../traces.js';
import type { uiCommand } from '../ui.js';
import { define, group } from './define.js';

export function registerTraces(program: Command): void {
  const traces = group(program, 'traces', 'list, show and export recorded rollouts');
  define(traces, {
    name: 'list',
    description: 'one line per rollout',
    options: [runOption('only this run'), ...storeOptions(), jsonOption()],
    examples: ['alight traces list --run rec-20261130-120000'],
    action: async (opts: Parameters<typeof listTraces>[0]) => (await import('../traces.js')).listTraces(opts),
  });
  define(traces, {
    name: 'show',
    description: 'one rollout and its calls',
    args: [['<rollout>', 'rollout id']],
    options: [
      ...storeOptions(),
      jsonOption('the export object as JSON'),
      new Option(
        '--call <seq>',
        'one call in full: what the harness sent and got, and (when translated) the chat request and answer',
      ).argParser(int),
    ],
    examples: ['alight traces show ro_0123456789abcdef', 'alight traces show ro_0123456789abcdef --call 3'],
    action: async (id: string, opts: Parameters<typeof showTrace>[1]) =>
      (await import('../traces.js')).showTrace(id, opts),
  });
  define(traces, {
    name: 'export',
    description: 'write rollouts as JSONL, one object per rollout (docs/design.md#trace-export)',
    options: [
      runOption('only this run'),
      new Option('--format <format>', 'output format').choices(['jsonl']).default('jsonl'),
      new Option('--out <file>', 'write here instead of stdout'),
      ...storeOptions(),
    ],
    examples: ['alight traces export --run my-run --out traces.jsonl'],
    action: async (opts: Parameters<typeof exportTraces>[0]) => (await import('../traces.js')).exportTraces(opts),
  });
}

export function registerRuns(program: Command): void {
  const runs = group(program, 'runs', 'recorded and training runs');
  define(runs, {
    name: 'list',
    description: 'one line per run',
    options: [...storeOptions(), jsonOption()],
    examples: ['alight runs list'],
    action: async (opts: Parameters<typeof listRuns>[0]) => (await import('../runs.js')).listRuns(opts),
  });
  define(runs, {
    name: 'show',
    description: "a training run's metrics per step; --plot writes reward, loss and entropy curves",
    args: [['<run>', 'the run']],
    options: [new Option('--plot <file.svg>', 'write the curves as an SVG image'), ...storeOptions(), jsonOption()],
    examples: ['alight runs show my-run --plot curves.svg'],
    action: async (run: string, opts: Parameters<typeof showRun>[1]) => (await import('../runs.js')).showRun(run, opts),
  });
}

export function registerUi(program: Command): void {
  define(program, {
    name: 'ui',
    description:
      'a local web page over the store (read-only, 127.0.0.1): runs, training curves (live), rollouts, conversations',
    options: [
      new Option('--port <port>', 'port on 127.0.0.1 (default: a free one)').argParser(int).default(0),
      configOption(
        '--tokenizer <spec>',
        'tokenizer',
        "decode the token view: a tokenizer.json, a model folder, a GGUF (default: a training run's own model)",
      ),
      ...storeOptions(),
    ],
    examples: ['alight ui', 'alight ui --port 8765 --db runs/alight.db'],
    action: async (opts: Parameters<typeof uiCommand>[0]) => (await import('../ui.js')).uiCommand(opts),
  });
}
