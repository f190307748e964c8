import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AlightError, ExitCode } from '../errors.js';
import { pythonStep } from '../models/convert.js';
import { asLines } from '../setup/events.js';
import { ensurePythonEnv } from '../setup/python-env.js';
import type { RolloutSummary, Store } from '../store/store.js';
import { type Conversation, type Redactions, rolloutConversations, Unrenderable } from './conversation.js';
import type { Candidate } from './curate.js';
import type { Row } from './merge.js';

export interface RenderOptions {
  /** The student: a Hugging Face folder whose chat template and tokenizer render the conversations. */
  model: string;
  keepThinking: boolean;
  /** Text removed from system and user messages before rendering (a teacher's privileged hints). */
  strip?: RegExp;
  log: (line: string) => void;
}

/**
 * Rollouts whose calls are foreign (another model's, a hosted API's: no ids of the student's) as the student would
 * have seen and said them: their conversations rendered with its chat template (python/alight_worker/render_sft.py),
 * the loss on the assistant's turns. A rollout that cannot be rendered is a candidate with its reason.
 */
export async function renderedCandidates(
  store: Store,
  rollouts: RolloutSummary[],
  o: RenderOptions,
  redacted: Redactions & { stripped: number },
): Promise<Candidate[]> {
  const base = (r: RolloutSummary) => ({
    rolloutId: r.id,
    taskId: r.task_id ?? r.id,
    state: r.state,
    reward: r.reward,
  });
  const read = rollouts.map((r) => {
    if (r.state !== 'succeeded') return { ...base(r), overlong: false, rows: [], conversations: [] };
    const calls = store.calls.list(r.id).filter((c) => c.status === 'ok');
    const overlong = calls.some((c) => c.finishReason === 'length');
    try {
      const conversations = rolloutConversations(calls, o.keepThinking, redacted).map((c) => stripped(c, o, redacted));
      return { ...base(r), overlong, rows: [], conversations };
    } catch (err) {
      if (!(err instanceof Unrenderable)) throw err;
      return { ...base(r), overlong, rows: [], conversations: [], unrenderable: err.message };
    }
  });
  const rendered = await render(
    read.filter((c) => c.conversations.length),
    o,
  );
  return read.map(({ conversations: _, ...c }) => {
    const out = rendered.get(c.rolloutId);
    if (!out) return c;
    return 'error' in out ? { ...c, unrenderable: out.error } : { ...c, rows: out.rows };
  });
}

/**
 * The privileged part of a teacher's prompt removed from what the student is trained to answer. A teacher that repeats
 * it in its own answer would teach the student to write it: that rollout is left out.
 */
function stripped(c: Conversation, o: RenderOptions, redacted: { stripped: number }): Conversation {
  const pattern = o.strip;
  if (!pattern) return c;
  if (c.messages.some((m) => m.role === 'assistant' && new RegExp(pattern.source).test(m.content)))
    throw new Unrenderable('an assistant turn repeats what --strip removes');
  return {
    ...c,
    messages: c.messages.map((m) => {
      if (m.role !== 'system' && m.role !== 'user') return m;
      const content = m.content.replace(pattern, '');
      if (content !== m.content) redacted.stripped++;
      return { ...m, content };
    }),
  };
}

type Rendered = Map<string, { rows: Row[] } | { error: string }>;

async function render(
  items: { rolloutId: string; conversations: Conversation[] }[],
  o: RenderOptions,
): Promise<Rendered> {
  const out: Rendered = new Map();
  if (!items.length) return out;
  const python = await ensurePythonEnv(asLines(o.log));
  const dir = mkdtempSync(join(tmpdir(), 'alight-render-'));
  try {
    const source = join(dir, 'conversations.jsonl');
    writeFileSync(
      source,
      items.map((i) => `${JSON.stringify({ id: i.rolloutId, conversations: i.conversations })}\n`).join(''),
    );
    const target = join(dir, 'rendered.jsonl');
    const args = ['--tokenizer', o.model, '--in', source, '--out', target];
    await pythonStep(python, 'alight_worker.render_sft', args, { log: o.log }, 'rendering with the chat template');
    for (const line of readFileSync(target, 'utf8').split('\n').filter(Boolean)) {
      const r = JSON.parse(line) as {
        id: string;
        error?: string;
        examples?: { ids: number[]; mask: number[]; prompt_length: number }[];
      };
      out.set(r.id, r.error !== undefined ? { error: r.error } : { rows: (r.examples ?? []).map(row) });
    }
    return out;
  } catch (err) {
    if (err instanceof AlightError) throw err;
    throw new AlightError(`cannot render with ${o.model}: ${(err as Error).message}`, ExitCode.input);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A rendered example as a row: no recorded logprobs (NaN, missing, never 0). */
const row = (e: { ids: number[]; mask: number[]; prompt_length: number }): Row => ({
  tokens: Int32Array.from(e.ids),
  mask: Uint8Array.from(e.mask),
  logprobs: new Float32Array(e.ids.length).fill(Number.NaN),
  promptLength: e.prompt_length,
  calls: [],
});
