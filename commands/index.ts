import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { AlightError, ExitCode, errorMessage } from '../src/errors.js';
import { packageRoot } from '../src/package-root.js';
import { refuseInapplicable } from './flags.js';
import { registerData } from './table/data.js';
import { registerEval } from './table/eval.js';
import { registerModels } from './table/models.js';
import { registerGateway, registerRecord, registerServe, registerServeVllm } from './table/record.js';
import { registerSamples } from './table/samples.js';
import { registerDoctor, registerInit } from './table/setup.js';
import { registerRuns, registerTraces, registerUi } from './table/traces.js';
import { registerSft, registerTrain } from './table/train.js';

/** What each exit code means: `--help` lists them, and so does the README. */
export const exitCodeMeanings: Record<keyof typeof ExitCode, string> = {
  ok: 'done',
  failure: 'failed (every rollout failed, a grade or an engine could not run)',
  usage: 'wrong command line (unknown flag, bad value, a flag that does not apply)',
  input: 'wrong input (missing or malformed file, unknown id, store in use)',
  interrupted: 'interrupted (Ctrl-C): work under way is recorded as interrupted',
};

function exitCodesHelp(): string {
  const rows = Object.entries(ExitCode).map(
    ([name, code]) => `  ${String(code).padStart(3)}  ${exitCodeMeanings[name as keyof typeof ExitCode]}`,
  );
  return `\nExit codes:\n${rows.join('\n')}\n`;
}

/** The command table, in the order `--help` lists it; each action loads its module only when it runs. */
const table: ((program: Command) => void)[] = [
  registerInit,
  registerRecord,
  registerServeVllm,
  registerServe,
  registerModels,
  registerGateway,
  registerTraces,
  registerSamples,
  registerTrain,
  registerSft,
  registerDoctor,
  registerData,
  registerEval,
  registerRuns,
  registerUi,
];

export function buildProgram(): Command {
  const { version } = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string };
  const program = new Command('alight')
    .description('Post-train LLM agents with RL through the harness they already ship')
    .version(version)
    .enablePositionalOptions()
    .showHelpAfterError()
    .addHelpText('after', exitCodesHelp())
    .hook('preAction', refuseInapplicable);
  for (const register of table) register(program);
  return program;
}

/** The only place that ends the process: every command returns or throws, and the exit code comes from here. */
export async function main(argv: string[]): Promise<never> {
  const program = buildProgram();
  // Commander's own errors (an unknown flag, a missing value, conflicting flags) in any subcommand throw, so that they
  // end with the usage code like every other command-line error, not commander's exit 1.
  const throwOnExit = (command: Command): void => {
    command.exitOverride();
    command.commands.forEach(throwOnExit);
  };
  throwOnExit(program);
  // `alight traces export | head`: a closed pipe is the reader's choice, not an error.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(ExitCode.ok);
    throw err;
  });
  return runEntry(() => program.parseAsync(argv));
}

/**
 * The one place alight exits, for the CLI and for scripts that users run (the demo): an AlightError prints its message
 * and exits with its code, never a stack trace; anything else is a bug and shows its stack.
 */
export async function runEntry(work: () => Promise<unknown>): Promise<never> {
  let code: number = ExitCode.ok;
  try {
    await work();
  } catch (err) {
    if (err instanceof CommanderError) {
      code = err.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    } else if (err instanceof AlightError) {
      process.stderr.write(`alight: ${err.message}\n`);
      code = err.exitCode;
    } else {
      process.stderr.write(`alight: unexpected error: ${errorMessage(err)}\n${(err as Error).stack ?? ''}\n`);
      code = ExitCode.failure;
    }
  }
  // Piped stdout is asynchronous: let it drain so that exiting cuts no output.
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  process.exit(code);
}
