import { existsSync, readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { z } from 'zod';
import { AlightError, ExitCode } from '../errors.js';
import { isRecord } from '../records.js';
import { groupedTrain } from './old-keys.js';
import { type Config, configSchema } from './schema.js';

export const configFileName = 'alight.config.yaml';

/**
 * Reads the config file (when there is one), applies defaults and validates. `moved`: the train keys it spells the old,
 * flat way, read in their groups (old-keys.ts).
 */
export function loadConfig(path?: string): { config: Config; path: string | null; moved: string[] } {
  const file = path ?? (existsSync(configFileName) ? configFileName : null);
  if (!file) return { config: configSchema.parse({}), path: null, moved: [] };
  let raw: unknown;
  try {
    raw = parse(readFileSync(file, 'utf8')) ?? {};
  } catch (err) {
    throw new AlightError(`cannot read ${file}: ${(err as Error).message}`, ExitCode.input);
  }
  const { train, moved } = groupedTrain((raw as Record<string, unknown>).train);
  const grouped = train === undefined ? raw : { ...(raw as object), train };
  return { config: validateConfig(grouped, file), path: file, moved };
}

export function validateConfig(raw: unknown, source: string): Config {
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success)
    throw new AlightError(`invalid settings in ${source}:\n${formatIssues(parsed.error)}`, ExitCode.input);
  return parsed.data;
}

export function formatIssues(error: z.ZodError): string {
  return error.issues.map((i) => `  ${i.path.join('.') || '(root)'}: ${i.message}`).join('\n');
}

/**
 * Flags win over the config file: each object is merged key by key, at every depth (a flag sets one key of a group and
 * leaves the group's others); undefined leaves the file's value; a list replaces the file's. The result is validated.
 */
export function withOverrides(
  config: Config,
  overrides: { [K in keyof Config]?: Partial<Config[K]> | Config[K] },
): Config {
  return validateConfig(merged(config, overrides), 'the command-line flags');
}

function merged(base: unknown, over: object): Record<string, unknown> {
  const out: Record<string, unknown> = isRecord(base) ? { ...base } : {};
  for (const [key, value] of Object.entries(over)) {
    if (value === undefined) continue;
    out[key] = isRecord(value) ? merged(out[key], value) : value;
  }
  return out;
}

/** `--db`, then `ALIGHT_DB`, then the config file's `db`. */
export function resolveDb(flag: string | undefined, config: Config): string {
  return flag ?? process.env.ALIGHT_DB ?? config.db;
}
