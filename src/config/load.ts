import { existsSync, readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { z } from 'zod';
import { AlightError, ExitCode } from '../errors.js';
import { type Config, configSchema } from './schema.js';

export const configFileName = 'alight.config.yaml';

/** Reads the config file (when there is one), applies defaults and validates. */
export function loadConfig(path?: string): { config: Config; path: string | null } {
  const file = path ?? (existsSync(configFileName) ? configFileName : null);
  if (!file) return { config: configSchema.parse({}), path: null };
  let raw: unknown;
  try {
    raw = parse(readFileSync(file, 'utf8')) ?? {};
  } catch (err) {
    throw new AlightError(`cannot read ${file}: ${(err as Error).message}`, ExitCode.input);
  }
  return { config: validateConfig(raw, file), path: file };
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

/** Flags win over the config file; undefined flags leave the file's value. The result is validated again. */
export function withOverrides(
  config: Config,
  overrides: { [K in keyof Config]?: Partial<Config[K]> | Config[K] },
): Config {
  const merged: Record<string, unknown> = { ...config };
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) continue;
    merged[key] =
      typeof value === 'object' && value !== null
        ? {
            ...(config[key as keyof Config] as object),
            ...Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)),
          }
        : value;
  }
  return validateConfig(merged, 'the command-line flags');
}

/** `--db`, then `ALIGHT_DB`, then the config file's `db`. */
export function resolveDb(flag: string | undefined, config: Config): string {
  return flag ?? process.env.ALIGHT_DB ?? config.db;
}
