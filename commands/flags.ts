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

/** The type of the config value at a dotted path: `train.lora.rank` → number. */
export type ConfigValue<P extends string, T = Config> = P extends `${infer Head}.${infer Rest}`
  ? ConfigValue<Rest, NonNullable<T>[Head & keyof NonNullable<T>]>
  : NonNullable<NonNullable<T>[P & keyof NonNullable<T>]>;

/** A hand-made option's value (a string unless its parser says otherwise), absent unless given. */
export const flag = <V>(option: Option): Flag<V | undefined> => option;

/** A hand-made option that is always set: mandatory, or with a default. */
export function alwaysSet<V>(option: Option): Flag<V> {
  if (!option.mandatory && option.defaultValue === undefined)
    throw new Error(`${option.flags} is neither mandatory nor defaulted: declare it with flag()`);
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

/** The declared options in order, each checked to be stored under its key. */
export function declaredOptions(declared: Flags): Option[] {
  for (const [key, option] of Object.entries(declared))
    if (option.attributeName() !== key)
      throw new Error(`${option.flags} is stored as ${option.attributeName()}, not ${key}`);
  return Object.values(declared);
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
