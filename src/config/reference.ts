import { z } from 'zod';
import { configSchema } from './schema.js';

/** One setting of alight.config.yaml, as the schema states it. */
export interface ConfigKey {
  key: string;
  type: string;
  default: unknown;
  description: string;
}

export type Schema = z.ZodType & { description?: string };

/** The type inside a key's optional and default wrappers. */
export function bare(s: Schema): Schema {
  while (s instanceof z.ZodDefault || s instanceof z.ZodOptional) s = s.unwrap() as Schema;
  return s;
}

/** The nearest description on the way in: on the wrapper (`.describe()` last) or on the type itself. */
export function described(s: Schema): string | undefined {
  let at: Schema = s;
  for (;;) {
    if (at.description) return at.description;
    if (!(at instanceof z.ZodDefault || at instanceof z.ZodOptional)) return undefined;
    at = at.unwrap() as Schema;
  }
}

/** A key's default, or undefined for none. */
export function defaultOf(s: Schema): unknown {
  let at: Schema = s;
  while (at instanceof z.ZodOptional) at = at.unwrap() as Schema;
  return at instanceof z.ZodDefault ? at.def.defaultValue : undefined;
}

function typeOf(s: Schema): string {
  const t = bare(s);
  if (t instanceof z.ZodEnum) return (t.options as string[]).join(' \\| ');
  if (t instanceof z.ZodNumber) return t.isInt ? 'integer' : 'number';
  if (t instanceof z.ZodBoolean) return 'boolean';
  if (t instanceof z.ZodString) return 'string';
  if (t instanceof z.ZodArray) return `list of ${typeOf(t.element as Schema)}`;
  if (t instanceof z.ZodRecord) return 'map';
  if (t instanceof z.ZodUnion) return (t.options as Schema[]).map(typeOf).join(' or ');
  if (t instanceof z.ZodLiteral) return JSON.stringify(t.value);
  if (t instanceof z.ZodObject) return 'object';
  return 'any';
}

/** A section of settings (`train.lora`), not a value that is an object (`k8s.resources`): its members are described. */
function isSection(s: Schema): boolean {
  if (!(s instanceof z.ZodObject)) return false;
  return Object.values(s.shape as Record<string, Schema>).every((c) => described(c) || isSection(bare(c)));
}

/** Every leaf setting under `s`, depth first in the schema's order; a section (an object of settings) is walked. */
export function configKeys(s: Schema = configSchema, prefix = ''): ConfigKey[] {
  const object = bare(s);
  if (!(object instanceof z.ZodObject)) throw new Error(`${prefix || 'the config'} is not an object`);
  return Object.entries(object.shape as Record<string, Schema>).flatMap(([name, child]) => {
    const key = prefix ? `${prefix}.${name}` : name;
    const inner = bare(child);
    if (isSection(inner)) return configKeys(child, key);
    const description = described(child);
    if (!description) throw new Error(`config key ${key} has no .describe() text`);
    return [{ key, type: typeOf(child), default: defaultOf(child), description }];
  });
}

function shown(value: unknown): string {
  if (value === undefined) return '—';
  if (typeof value === 'number') return String(value);
  return `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``;
}

// A table cell's text as Markdown shows it: pipes, angle brackets (<run> is not a tag) and asterisks escaped.
const cell = (text: string): string =>
  text.replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/\*/g, '\\*').replace(/\n/g, ' ');

export const referenceStart = '<!-- generated from src/config/schema.ts by npm run docs:config: edit the schema -->';
export const referenceEnd = '<!-- end of the generated reference -->';

/** The reference table of docs/configuration.md, generated so that it cannot drift from the schema. */
export function configReference(): string {
  const rows = configKeys().map((k) => `| \`${k.key}\` | ${k.type} | ${shown(k.default)} | ${cell(k.description)} |`);
  return ['| key | type | default | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

/** `page` with its generated reference (between the markers) replaced by the schema's; throws without the markers. */
export function withReference(page: string): string {
  const start = page.indexOf(referenceStart);
  const end = page.indexOf(referenceEnd);
  if (start === -1 || end < start) throw new Error('the page has no generated-reference markers');
  return `${page.slice(0, start + referenceStart.length)}\n${configReference()}\n${page.slice(end)}`;
}
