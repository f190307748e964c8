import { type Command, CommanderError, Option } from 'commander';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { alwaysSet, configValues, declaredOptions } from '../../commands/flags.js';
import { buildProgram } from '../../commands/index.js';
import { alias, aliased, configOption, fromSchema, rolloutsOption, schemaOption } from '../../commands/options.js';
import { type SftFlags, type TrainFlags, trainFlags } from '../../commands/table/declared.js';
import type { DedupeFlags } from '../../commands/table/declared-data.js';
import type { BuildFlags } from '../../commands/table/declared-samples.js';
import { AlightError, ExitCode } from '../../src/errors.js';

function allCommands(command: Command): Command[] {
  return [command, ...command.commands.flatMap(allCommands)];
}

describe('the command table', () => {
  it("takes a config-backed flag's help, choices and parser from the schema, and leaves its default to the config", () => {
    const n = configOption('--n <n>', 'record.n');
    expect(n.description).toBe('rollouts per task (config record.n, default 1)');
    expect(n.defaultValue).toBeUndefined(); // alight.config.yaml's record.n stands unless the flag is given
    expect(n.parseArg!('4', undefined)).toBe(4);
    expect(() => n.parseArg!('4.5', undefined)).toThrow(AlightError);
    expect(configOption('--kind <k>', 'upstream.kind').argChoices).toEqual(['vllm', 'openai-compatible']);
    expect(configOption('--lr <r>', 'train.optimiser.lr').parseArg!('3e-6', undefined)).toBe(3e-6);
    expect(() => fromSchema('train.nope')).toThrow(/no config key train.nope/);
  });

  it('gives a flag of a command that reads no config the schema default, unless told another', () => {
    expect(schemaOption('--advantage <a>', 'train.batch.advantage').defaultValue).toBe('grpo');
    expect(schemaOption('--max-response-tokens <n>', 'train.batch.maxResponseTokens', 32768).defaultValue).toBe(32768);
    expect(schemaOption('--drop-zero-variance', 'train.batch.dropZeroVariance').defaultValue).toBeUndefined();
    // Its type follows: set where the schema (or the command) gives a default, a switch or an optional key absent.
    expectTypeOf<BuildFlags['advantage']>().toEqualTypeOf<'grpo' | 'drgrpo' | 'rloo'>();
    expectTypeOf<BuildFlags['maxResponseTokens']>().toEqualTypeOf<number>();
    expectTypeOf<BuildFlags['maxPromptTokens']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<BuildFlags['dropZeroVariance']>().toEqualTypeOf<boolean | undefined>();
  });

  it('stores a hidden alias under the attribute of the option it stands for', () => {
    const rollouts = rolloutsOption('record.n');
    const k = alias('-k <k>', rollouts);
    expect([rollouts.attributeName(), k.attributeName(), k.hidden]).toEqual(['n', 'n', true]);
    expect(k.parseArg!('2', undefined)).toBe(2);
  });

  it('adds the old spellings declared with an option right after it, under no key of their own', () => {
    const declared = { n: aliased(rolloutsOption(undefined, 'attempts').default(1), '-k <k>'), x: new Option('--x') };
    expect(declaredOptions(declared).map((o) => [o.flags, o.attributeName(), o.hidden])).toEqual([
      ['-n, --rollouts <n>', 'n', false],
      ['-k <k>', 'n', true],
      ['--x', 'x', false],
    ]);
  });

  it('declares --db and --json once each per command, and every option has help', () => {
    for (const command of allCommands(buildProgram())) {
      const flags = command.options.map((o) => o.long ?? o.short);
      expect(new Set(flags).size, command.name()).toBe(flags.length);
      for (const o of command.options) expect(o.description, `${command.name()} ${o.flags}`).not.toBe('');
    }
  });
});

describe('a command declared once', () => {
  it('types its flags from the declaration and puts each config-backed one on the key it names', () => {
    expectTypeOf<TrainFlags['device']>().toEqualTypeOf<'cpu' | 'cuda' | undefined>();
    expectTypeOf<TrainFlags['loraRank']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<SftFlags['epochs']>().toEqualTypeOf<number>();
    const flags: TrainFlags = { loraRank: 8, device: 'cpu', lr: 1e-4, timeout: 30, run: 'r', port: 0, dryRun: true };
    expect(configValues(trainFlags(), { ...flags, judge: 'http://127.0.0.1:9/v1' })).toEqual({
      train: { lora: { rank: 8 }, vllm: { device: 'cpu' }, optimiser: { lr: 1e-4 }, rollouts: { timeoutS: 30 } },
      reward: { judge: { url: 'http://127.0.0.1:9/v1' } },
      gateway: { port: 0 },
    });
  });

  it("refuses a declaration whose key is not commander's name for the flag, or an always-set flag that is not", () => {
    expect(() => declaredOptions({ lr: configOption('--rate <r>', 'train.optimiser.lr') })).toThrow(
      /stored as rate, not lr/,
    );
    expect(() => alwaysSet(new Option('--epochs <n>'))).toThrow(/neither mandatory nor defaulted/);
  });

  it('types a lone --no-x as always set (commander defaults it to true), a plain switch as absent unless given', () => {
    expectTypeOf<DedupeFlags['near']>().toEqualTypeOf<boolean>();
    expect(alwaysSet<boolean>(new Option('--no-near')).negate).toBe(true);
  });
});

/** What parsing `argv` ends with: the refusal, or `ran` when it reached the action (which does nothing here). */
async function parsed(argv: string[]): Promise<CommanderError | 'ran'> {
  const program = buildProgram();
  const quiet = (command: Command): void => {
    command.exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
    command.action(() => {});
    command.commands.forEach(quiet);
  };
  quiet(program);
  return program.parseAsync(argv, { from: 'user' }).then(
    () => 'ran' as const,
    (err: unknown) => {
      if (err instanceof CommanderError) return err;
      throw err;
    },
  );
}

describe('the rules between flags', () => {
  it('refuses, before anything runs, a flag that contradicts another or needs one not given', async () => {
    for (const [argv, message] of [
      [
        ['record', '--serve', 'a', '--serve-vllm', 'b', '--', 'x'],
        "'--serve <file|name>' cannot be used with option '--serve-vllm",
      ],
      [
        ['record', '--upstream', 'http://h/v1', '--serve-vllm', 'b', '--', 'x'],
        "'--upstream <url>' cannot be used with",
      ],
      [
        ['eval', 'swebench', '--tasks', 't', '--device', 'cpu', '--', 'x'],
        "'--device <device>' applies only with --serve-vllm",
      ],
      [
        ['train', '--init-from', 'a', '--resume', 'b', '--', 'x'],
        "'--init-from <run>' cannot be used with option '--resume",
      ],
      [
        ['samples', 'curate', '--run', 'a', '--strip', 'x', '--dry-run'],
        '--keep-thinking and --strip apply to --render',
      ],
      [['doctor', '--vllm'], '--vllm goes with --setup'],
    ] as const) {
      const refused = await parsed([...argv]);
      expect(refused, argv.join(' ')).toBeInstanceOf(CommanderError);
      expect((refused as CommanderError).message).toContain(message);
    }
    expect(((await parsed(['doctor', '--vllm'])) as CommanderError).exitCode).toBe(ExitCode.usage);
    expect(await parsed(['samples', 'curate', '--run', 'a', '--render', 'm', '--strip', 'x', '--dry-run'])).toBe('ran');
    expect(await parsed(['record', '--serve-vllm', 'b', '--device', 'cpu', '--', 'x'])).toBe('ran');
  });
});
