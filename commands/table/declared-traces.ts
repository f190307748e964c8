import { Option } from 'commander';
import { alwaysSet, type FlagsOf, flag } from '../flags.js';
import { configOption, int, jsonOption, runOption, storeFlags } from '../options.js';

// The flags of the commands that read the store (traces, runs, ui), apart from their rows, as declared.ts explains:
// commands/traces.ts, runs.ts and ui.ts read their types.

/** `alight traces list`'s flags. */
export const tracesListFlags = () => ({ run: runOption('only this run'), ...storeFlags(), json: jsonOption() });
export type TracesListFlags = FlagsOf<ReturnType<typeof tracesListFlags>>;

/** `alight traces show`'s flags. */
export const traceShowFlags = () => ({
  ...storeFlags(),
  json: jsonOption('the export object as JSON'),
  call: flag<number>(
    new Option(
      '--call <seq>',
      'one call in full: what the harness sent and got, and (when translated) the chat request and answer',
    ).argParser(int),
  ),
});
export type TraceShowFlags = FlagsOf<ReturnType<typeof traceShowFlags>>;

/** `alight traces export`'s flags. */
export const tracesExportFlags = () => ({
  run: runOption('only this run'),
  format: alwaysSet<'jsonl'>(new Option('--format <format>', 'output format').choices(['jsonl']).default('jsonl')),
  out: flag<string>(new Option('--out <file>', 'write here instead of stdout')),
  ...storeFlags(),
});
export type TracesExportFlags = FlagsOf<ReturnType<typeof tracesExportFlags>>;

/** `alight runs list`'s flags. */
export const runsListFlags = () => ({ ...storeFlags(), json: jsonOption() });
export type RunsListFlags = FlagsOf<ReturnType<typeof runsListFlags>>;

/** `alight runs show`'s flags. */
export const runShowFlags = () => ({
  plot: flag<string>(new Option('--plot <file.svg>', 'write the curves as an SVG image')),
  ...storeFlags(),
  json: jsonOption(),
});
export type RunShowFlags = FlagsOf<ReturnType<typeof runShowFlags>>;

/** `alight ui`'s flags. */
export const uiFlags = () => ({
  port: alwaysSet<number>(
    new Option('--port <port>', 'port on 127.0.0.1 (default: a free one)').argParser(int).default(0),
  ),
  tokenizer: configOption(
    '--tokenizer <spec>',
    'tokenizer',
    "decode the token view: a tokenizer.json, a model folder, a GGUF (default: a training run's own model)",
  ),
  ...storeFlags(),
});
export type UiFlags = FlagsOf<ReturnType<typeof uiFlags>>;
