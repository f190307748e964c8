import type { Command, Option } from 'commander';
import type { Config } from '../src/config/schema.js';
import { ExitCode } from '../src/errors.js';

declare const valueType: unique symbol;
/** An option that tells the type checker, and only it, the value commander hands the action for it. */
export type Flag<V> = Option & { readonly [valueType]?: V };

/**
 * A command's options declared once, keyed by the name commander stores each under: `--lora-rank` as `loraRank`. The
 * keys are checked against commander's names when the command is defined, so that the flags type cannot drift.
 */
export type Flags = Record<string, Flag<unknown>>;

type ValueOf<F> = F extends Flag<infer V> ? V : never;
type MaybeAbsent<T extends Flags> = { [K in keyof T]: undefined extends ValueOf<T[K]> ? K : never }[keyof T];

/** The options object an action receives, from the declaration: a flag may be absent unless its type says otherwise. */
export type FlagsOf<T extends Flags> = { [K in MaybeAbsent<T>]?: Exclude<ValueOf<T[K]>, undefined> } & {
  [K in Exclude<keyof T, MaybeAbsent<T>>]: ValueOf<T[K]>;
};

/** The config setting at a dotted path as the schema parses it: `undefined` in it where the key has no default. */
type ConfigSetting<P extends string, T = Config> = P extends `${infer Head}.${infer Rest}`
  ? ConfigSetting<Rest, NonNullable<T>[Head & keyof NonNullable<T>]>
  : NonNullable<T>[P & keyof NonNullable<T>];

/** The type of the config value at a dotted path: `train.lora.rank` → number. */
export type ConfigValue<P extends string> = NonNullable<ConfigSetting<P>>;

/**
 * The value of a flag that takes the schema's default (schemaOption): always set where the key has one, but a switch
 * stays absent unless given (a default of false makes no commander default).
 */
export type SchemaValue<P extends string> =
  undefined extends ConfigSetting<P>
    ? ConfigValue<P> | undefined
    : ConfigValue<P> extends boolean
      ? boolean | undefined
      : ConfigValue<P>;

/** A hand-made option's value (a string unless its parser says otherwise), absent unless given. */
export const flag = <V>(option: Option): Flag<V | undefined> => option;

/** A hand-made option that is always set: mandatory, with a default, or a lone `--no-x` (commander sets it true). */
export function alwaysSet<V>(option: Option): Flag<V> {
  if (!option.mandatory && option.defaultValue === undefined && !option.negate)
    throw new Error(`${option.flags} is neither mandatory nor defaulted: declare it with flag()`);
  return option;
}

/**
 * Old spellings of an option (hidden options that set its value): they go with it, after it, rather than under a key
 * of their own, so that the declaration's keys stay the names the action reads.
 */
const spellings = new WeakMap<Option, Option[]>();
export function withSpellings<O extends Option>(option: O, aliases: Option[]): O {
  spellings.set(option, [...(spellings.get(option) ?? []), ...aliases]);
  return option;
}

/** The config key each config-backed option sets (configOption records it). */
const configPaths = new WeakMap<Option, string>();
export function setsConfig<O extends Option>(option: O, path: string): O {
  configPaths.set(option, path);
  return option;
}

/**
 * The config the given flags set, nested as the config nests it: `--lora-rank 8 --device cpu --judge U` gives
 * `{ train: { lora: { rank: 8 }, vllmDevice: 'cpu' }, reward: { judge: { url: U } } }`. Flags that set no key (absent,
 * or declared without one) are left out.
 */
export function configValues(declared: Flags, flags: object): Record<string, Record<string, unknown> | undefined> {
  const values: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(flags)) {
    const path = declared[key] && configPaths.get(declared[key])?.split('.');
    if (value === undefined || !path) continue;
    let at = values;
    for (const part of path.slice(0, -1)) at = (at[part] ??= {}) as Record<string, unknown>;
    at[path.at(-1)!] = value;
  }
  return values as Record<string, Record<string, unknown> | undefined>;
}

/** The declared options in order (each followed by its old spellings), each checked to be stored under its key. */
export function declaredOptions(declared: Flags): Option[] {
  for (const [key, option] of Object.entries(declared))
    if (option.attributeName() !== key)
      throw new Error(`${option.flags} is stored as ${option.attributeName()}, not ${key}`);
  return Object.values(declared).flatMap((option) => [option, ...(spellings.get(option) ?? [])]);
}

/**
 * The two rules between flags, each declared on its option: a flag that makes no sense without another is `onlyWith`
 * it, one that contradicts another `.conflicts()` with it (commander's: `option 'X' cannot be used with option 'Y'`).
 * Either is refused as a usage error, never ignored. `words` replace `option 'X' applies only with --Y` where the
 * rule's reason says more.
 */
const prerequisites = new WeakMap<Option, { needs: string; words?: string }>();
export function onlyWith<O extends Option>(option: O, attribute: string, words?: string): O {
  prerequisites.set(option, { needs: attribute, words });
  return option;
}

/** Every flag of a group `onlyWith` the same one: a group that means nothing without it (`--namespace` without k8s). */
export function allOnlyWith<T extends Flags>(declared: T, attribute: string): T {
  for (const option of Object.values(declared)) onlyWith(option, attribute);
  return declared;
}

/** A `preAction` hook: a flag given without the one it needs ends the command as a usage error. */
export function refuseInapplicable(_program: Command, command: Command): void {
  for (const option of command.options) {
    const rule = prerequisites.get(option);
    if (!rule || command.getOptionValueSource(option.attributeName()) !== 'cli') continue;
    const { needs, words } = rule;
    if (command.getOptionValue(needs) !== undefined && command.getOptionValueSource(needs) !== 'default') continue;
    const other = command.options.find((o) => !o.hidden && o.attributeName() === needs);
    command.error(`error: ${words ?? `option '${option.flags}' applies only with ${other?.long ?? needs}`}`, {
      exitCode: ExitCode.usage,
      code: 'alight.inapplicable',
    });
  }
}
