import { balancedJson } from '../json-text.js';
import type { Scale } from './prompt.js';

export interface Score {
  score: number;
  explanation: string;
}

/** The judge's answer read: a score per id it was given, or what was wrong with it (the call may be retried). */
export type Verdict = { ok: true; scores: Map<string, Score> } | { ok: false; problem: string };

const fail = (problem: string): Verdict => ({ ok: false, problem });

/**
 * The answer's JSON schema, sent as `response_format` so that an engine with guided decoding (vLLM, alight serve,
 * OpenAI) can only sample an answer of this shape: one entry per trajectory, in the prompt's order, each naming its id
 * (a grammar cannot forbid an id twice otherwise); the score on the scale where a grammar can say so. A short explanation comes before the score: a small judge otherwise
 * writes until its token limit.
 */
export function verdictSchema(ids: readonly string[], scale: Scale): Record<string, unknown> {
  // An integer scale of up to 21 points is listed, so that a grammar keeps the score on it (JSON schema grammars have
  // no numeric bounds); a continuous one is a number, checked when read.
  const points = scale.max - scale.min;
  const score =
    Number.isInteger(scale.min) && Number.isInteger(scale.max) && points <= 20
      ? { enum: Array.from({ length: points + 1 }, (_, i) => scale.min + i) }
      : { type: 'number' };
  const entry = (id: string) => ({
    type: 'object',
    properties: { id: { const: id }, explanation: { type: 'string', maxLength: 200 }, score },
    required: ['id', 'explanation', 'score'],
    additionalProperties: false,
  });
  return {
    type: 'object',
    properties: { scores: { type: 'array', prefixItems: ids.map(entry), minItems: ids.length, maxItems: ids.length } },
    required: ['scores'],
    additionalProperties: false,
  };
}

/** The first balanced {…} in `text` (an answer in a code fence or with words around it), or null. */
function firstObject(text: string): string | null {
  const start = text.indexOf('{');
  return start < 0 ? null : balancedJson(text, start);
}

/**
 * The scores in the judge's answer, mapped by id (never by position): each id given exactly once, no other, each score
 * a number on the scale. Anything else is a problem, not a score: a judge's mistake is never the policy's 0.
 */
export function readVerdict(text: string, ids: readonly string[], scale: Scale): Verdict {
  const json = firstObject(text);
  if (json === null) return fail('the judge answered no JSON object');
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return fail('the judge answered JSON that does not parse');
  }
  const list = (parsed as { scores?: unknown }).scores;
  if (!Array.isArray(list)) return fail('the judge answered no "scores" list');
  if (list.length !== ids.length) return fail(`${list.length} scores for ${ids.length} trajectories`);
  const scores = new Map<string, Score>();
  for (const entry of list as { id?: unknown; score?: unknown; explanation?: unknown }[]) {
    const id = String(entry?.id ?? '');
    if (!ids.includes(id)) return fail(`a score for ${JSON.stringify(id).slice(0, 40)}, no trajectory's id`);
    if (scores.has(id)) return fail(`two scores for ${id}`);
    const score = typeof entry.score === 'number' ? entry.score : Number.NaN;
    if (!(score >= scale.min && score <= scale.max))
      return fail(`score ${JSON.stringify(entry.score)} for ${id} is not a number from ${scale.min} to ${scale.max}`);
    scores.set(id, { score, explanation: typeof entry.explanation === 'string' ? entry.explanation : '' });
  }
  return { ok: true, scores };
}
