import type { Command } from 'commander';
import { declaredOptions, type Flags } from '../flags.js';

/** One row of the command table: what `--help` shows, and the action, whose module loads only when it runs. */
export interface CommandSpec {
  name: string;
  description: string;
  /** Positional arguments: name (`<x>`, `[x]`, `[x...]`), description, and default. */
  args?: [string, string, unknown?][];
  /** In --help order, keyed by the name each is stored under: `FlagsOf` gives the type the action receives. */
  options: Flags;
  /** Options after the first argument belong to the harness command (`alight record -- node harness.mjs --x`). */
  passThrough?: boolean;
  examples?: string[];
  /** Called with commander's arguments: the positional ones, then the options object. */
  action: (...args: never[]) => Promise<unknown>;
}

export function examples(lines: string[]): string {
  return `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;
}

/** Adds `spec` as a subcommand of `parent`. */
export function define(parent: Command, spec: CommandSpec): Command {
  const command = parent.command(spec.name).description(spec.description);
  for (const [name, description, value] of spec.args ?? []) command.argument(name, description, value);
  if (spec.passThrough) command.passThroughOptions();
  for (const option of declaredOptions(spec.options)) command.addOption(option);
  if (spec.examples) command.addHelpText('after', examples(spec.examples));
  const action = spec.action as (...args: unknown[]) => Promise<unknown>;
  command.action(async (...args: unknown[]) => {
    await action(...args);
  });
  return command;
}

/** A command that only groups others (`alight traces`, `alight eval`). */
export function group(parent: Command, name: string, description: string): Command {
  return parent.command(name).description(description);
}
