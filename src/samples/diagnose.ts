export const breakKinds = [
  'retokenization',
  'arguments',
  'template',
  'compaction',
  'retry',
  're-laid',
  'new-context',
  'other',
] as const;
export type BreakKind = (typeof breakKinds)[number];

import { balancedJson as balanced } from '../json-text.js';
import { commonPrefix } from '../store/codec.js';

/** Where the row's first and last sampled answers begin. */
export interface AnswerSpan {
  first: number;
  last: number;
}

/** Text of token ids, when a tokenizer is known. */
export type Detokenize = (ids: readonly number[]) => string;

export interface Diagnosis {
  kind: BreakKind;
  /** Why, in a sentence a user can act on. */
  reason: string;
  /** The decoded text around the first difference, when a tokenizer is known. */
  contextText?: string;
  promptText?: string;
}

/**
 * Why a call's prompt did not extend the open row closest to it. `context` and `prompt` are the whole token
 * sequences (the row so far and the call's prompt); `position` is where they first differ; `answers` says where the
 * row's first and last completions start (a rewrite from the last on is the template's doing, before it the history's).
 * - re-laid: they part before the row's first answer, yet most of the row is in the prompt — the same conversation
 *   laid out anew (aider moves its finished turns ahead of the repo map);
 * - new-context: they part before the row's first answer (a shared system prompt at most) — a sub-agent or a fresh
 *   conversation, not a fault;
 * - retry: the whole prompt is already in the row — the same request sent again (an SDK retry, a resampled turn);
 * - retokenization: the same text, other ids (BPE is not one-to-one; the harness re-sent text);
 * - arguments: in the last answer, a JSON value the model wrote comes back JSON-equal but written otherwise (the
 *   harness parsed the tool call's arguments and dumped them again);
 * - template: the last answer was rewritten or partly removed (e.g. thinking stripped), and the rest follows on, or
 *   only its end differs (a stop token the template writes as its own end-of-turn token, whitespace trimmed);
 * - compaction: the history before it was cut or summarised (or the prompt is shorter and does not follow on);
 * - other: anything else.
 */
export function diagnose(
  context: readonly number[],
  prompt: readonly number[],
  position: number,
  answers: AnswerSpan,
  detokenize?: Detokenize,
): Diagnosis {
  if (position < answers.first) {
    const shared = sharedShare(context, prompt);
    if (shared >= 0.5)
      return {
        kind: 're-laid',
        reason:
          `parts after ${position} tokens, yet ${Math.round(shared * 100)}% of the row reappears in the prompt: the same ` +
          'conversation laid out anew (aider moves its finished turns ahead of the repo map). Each such call starts ' +
          'a row; a harness setting that keeps the history append-only (in order) merges them',
      };
    return {
      kind: 'new-context',
      reason:
        `shares only ${position} tokens (part of the first prompt) ` +
        'with the closest row: a new conversation or sub-agent',
    };
  }
  if (position === prompt.length) {
    return {
      kind: 'retry',
      reason:
        'the whole prompt is already in the row: the same request was sent ' +
        'again (an SDK retry or a resampled turn), so its answer starts a branch',
    };
  }
  const shape = { late: position >= answers.last, contextLength: context.length, promptLength: prompt.length };
  if (detokenize) {
    const contextText = detokenize(context);
    const promptText = detokenize(prompt);
    const { at, ...texts } = excerpt(contextText, promptText, detokenize(context.slice(0, position)).length);
    if (promptText.startsWith(contextText)) {
      return {
        kind: 'retokenization',
        reason: "the prompt repeats the row's text with other token ids (the text was re-tokenized)",
        ...texts,
      };
    }
    if (shape.late && reserialised(contextText, promptText, at)) {
      return {
        kind: 'arguments',
        reason:
          'the tool-call arguments the model wrote came back written otherwise (the same JSON): the harness parsed ' +
          "and re-dumped them (LangChain's ChatOpenAI, OpenHands in chat mode). The gateway puts the model's own text " +
          'back when the harness returns the call ids it was given; check that the harness keeps them',
        ...texts,
      };
    }
    const endOnly = /^\s*$/.test(detokenize(context.slice(position, -1)));
    return {
      ...classify({
        resumed: resumes([contextText, detokenize(context.slice(0, -1))], promptText, at),
        endOnly,
        ...shape,
      }),
      ...texts,
    };
  }
  const d = classify({
    resumed: resumes([context, context.slice(0, -1)], prompt, position),
    endOnly: position === context.length - 1,
    ...shape,
  });
  return d.kind === 'other' ? { ...d, reason: `${d.reason} (pass --tokenizer to see the text)` } : d;
}

interface BreakShape {
  /** The row's tail reappears in the prompt after the part it drops. */
  resumed: boolean;
  /** What the prompt drops of the row is its last token, perhaps after whitespace. */
  endOnly: boolean;
  /** They part within the row's last answer. */
  late: boolean;
  contextLength: number;
  promptLength: number;
}

function classify({ resumed, endOnly, late, contextLength, promptLength }: BreakShape): Diagnosis {
  if (endOnly && late) {
    return {
      kind: 'template',
      reason:
        'the last answer ends otherwise in the history: the chat template closes answers with ' +
        'its own end-of-turn token (the model stopped on another) or trims their whitespace',
    };
  }
  if (resumed && late) {
    return {
      kind: 'template',
      reason:
        'the last answer was rewritten or partly removed in the history (e.g. ' +
        'reasoning stripped by the chat template), then the prompt goes on as before',
    };
  }
  if (resumed || promptLength < contextLength) {
    return {
      kind: 'compaction',
      reason: `the history (${contextLength} tokens) was cut or summarised (the prompt has ${promptLength})`,
    };
  }
  return { kind: 'other', reason: 'the prompt rewrites the history' };
}

/**
 * Whether `prompt` picks up the row again after dropping part of it at `at`: the tail of one of `bodies` reappears. The
 * bodies are the row and the row without its last token, a stop token that the template may write its own way.
 */
function resumes<T extends string | readonly number[]>(bodies: readonly T[], prompt: T, at: number): boolean {
  return bodies.some((body) => tailReappears(body, prompt, at));
}

function tailReappears<T extends string | readonly number[]>(body: T, prompt: T, at: number): boolean {
  const tail = body.slice(Math.max(at, body.length - 16));
  if (tail.length === 0) return false;
  const rest = prompt.slice(at);
  if (typeof rest === 'string') return rest.includes(tail as string);
  const needle = tail as readonly number[];
  const hay = rest as readonly number[];
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

/** The share of the row's 8-token windows found anywhere in the prompt. */
function sharedShare(context: readonly number[], prompt: readonly number[]): number {
  const n = 8;
  if (context.length < n || prompt.length < n) return 0;
  const windows = new Set<string>();
  for (let i = 0; i + n <= prompt.length; i++) windows.add(prompt.slice(i, i + n).join(','));
  let found = 0;
  for (let i = 0; i + n <= context.length; i++) if (windows.has(context.slice(i, i + n).join(','))) found++;
  return found / (context.length - n + 1);
}

/**
 * Whether the JSON value that encloses `at` (the first difference) in both texts is the same value written otherwise:
 * tried from the innermost `{` or `[` before `at` outwards, within 4,000 characters.
 */
function reserialised(contextText: string, promptText: string, at: number): boolean {
  for (let start = at; start >= Math.max(0, at - 4000); start--) {
    const c = contextText[start];
    if (c !== '{' && c !== '[') continue;
    const mine = balanced(contextText, start);
    const theirs = balanced(promptText, start);
    if (mine === null || theirs === null || mine.length <= at - start) continue;
    const a = parsed(mine);
    const b = parsed(theirs);
    if (a !== undefined && b !== undefined) return mine !== theirs && JSON.stringify(a) === JSON.stringify(b);
  }
  return false;
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function excerpt(
  contextText: string,
  promptText: string,
  near: number,
): { contextText: string; promptText: string; at: number } {
  const at = Math.min(commonPrefix(contextText, promptText), near + 64);
  const from = Math.max(0, at - 40);
  return { contextText: contextText.slice(from, at + 60), promptText: promptText.slice(from, at + 60), at };
}

export function summariseBreaks(kinds: readonly BreakKind[]): Record<BreakKind, number> {
  const counts = Object.fromEntries(breakKinds.map((k) => [k, 0])) as Record<BreakKind, number>;
  for (const k of kinds) counts[k]++;
  return counts;
}
