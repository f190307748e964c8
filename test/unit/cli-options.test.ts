import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../commands/index.js';
import { alias, configOption, fromSchema, rolloutsOption, schemaOption } from '../../commands/options.js';
import { AlightError } from '../../src/errors.js';

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
    expect(configOption('--lr <r>', 'train.lr').parseArg!('3e-6', undefined)).toBe(3e-6);
    expect(() => fromSchema('train.nope')).toThrow(/no config key train.nope/);
  });

  it('gives a flag of a command that reads no config the schema default, unless told another', () => {
    expect(schemaOption('--advantage <a>', 'train.advantage').defaultValue).toBe('grpo');
    expect(schemaOption('--max-response-tokens <n>', 'train.maxResponseTokens', 32768).defaultValue).toBe(32768);
    expect(schemaOption('--drop-zero-variance', 'train.dropZeroVariance').defaultValue).toBeUndefined();
  });

  it('stores a hidden alias under the attribute of the option it stands for', () => {
    const rollouts = rolloutsOption('record.n');
    const k = alias('-k <k>', rollouts);
    expect([rollouts.attributeName(), k.attributeName(), k.hidden]).toEqual(['n', 'n', true]);
    expect(k.parseArg!('2', undefined)).toBe(2);
  });

  it('declares --db and --json once each per command, and every option has help', () => {
    for (const command of allCommands(buildProgram())) {
      const flags = command.options.map((o) => o.long ?? o.short);
      expect(new Set(flags).size, command.name()).toBe(flags.length);
      for (const o of command.options) expect(o.description, `${command.name()} ${o.flags}`).not.toBe('');
    }
  });
});
