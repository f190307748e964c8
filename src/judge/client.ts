import { randomBytes } from 'node:crypto';
import { AlightError, ExitCode } from '../errors.js';
import type { Slots } from '../slots.js';
import { judgePrompt, type Scale, type Trajectory } from './prompt.js';
import { readVerdict, type Score, verdictSchema } from './verdict.js';

/** An OpenAI-compatible chat endpoint and the model it judges with. */
export interface JudgeEndpoint {
  url: string;
  model: string;
  apiKey?: string;
}

export interface JudgeSettings {
  endpoint: JudgeEndpoint;
  rubric: string;
  scale: Scale;
  timeoutMs: number;
  /** Calls again after an answer that cannot be read (a wrong number of scores, no JSON): ART's fix, once. */
  retries: number;
  maxTokens: number;
  /** Asks for the answer's JSON schema (response_format): a small judge under guided decoding answers in shape. */
  structured: boolean;
  /** Judge calls in flight at most, across every group of the run. */
  slots: Slots;
  budget: TokenBudget;
}

/** One call to the judge: recorded apart from the policy's calls, never trained on. */
export interface JudgeCall {
  promptTokens: number | null;
  completionTokens: number | null;
  ms: number;
  /** Why its answer gave no scores (transport, timeout, status, unreadable), or null. */
  problem: string | null;
  answer: string | null;
}

export interface GroupJudgement {
  /** Per rollout: its score and the judge's explanation, or null where the judge failed it (judge-failed). */
  scores: Map<string, Score | null>;
  calls: JudgeCall[];
  problem: string | null;
}

/** The judge's tokens a run may spend (prompt and completion); judging stops loudly once they are spent. */
export class TokenBudget {
  spent = 0;
  constructor(readonly limit: number | null) {}

  check(): void {
    if (this.limit !== null && this.spent >= this.limit)
      throw new AlightError(
        `the judge's token budget is spent (${this.spent} of ${this.limit} tokens): raise reward.judge.budgetTokens`,
        ExitCode.failure,
      );
  }
}

const hex = (bytes: number): string => randomBytes(bytes).toString('hex');
const shuffled = <T>(xs: T[]): T[] => {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = randomBytes(4).readUInt32LE(0) % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
};

/** An answer with nothing in it: no text, no tool call, in the agent's last message. */
const emptyAnswer = (t: Trajectory): boolean => {
  const last = [...t.messages].reverse().find((m) => m.role === 'assistant');
  return !last || (!last.content.trim() && !last.tool_calls?.length);
};

/** One POST to the judge: its answer's text and token counts, or the problem. */
async function call(s: JudgeSettings, messages: unknown, ids: string[]): Promise<JudgeCall> {
  const started = performance.now();
  const done = (fields: Partial<JudgeCall>): JudgeCall => ({
    promptTokens: null,
    completionTokens: null,
    problem: null,
    answer: null,
    ...fields,
    ms: performance.now() - started,
  });
  try {
    const res = await fetch(`${s.endpoint.url.replace(/\/$/, '')}/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(s.endpoint.apiKey ? { authorization: `Bearer ${s.endpoint.apiKey}` } : {}),
      },
      body: JSON.stringify({
        model: s.endpoint.model,
        messages,
        temperature: 0,
        max_tokens: s.maxTokens,
        ...(s.structured && {
          response_format: {
            type: 'json_schema',
            json_schema: { name: 'scores', schema: verdictSchema(ids, s.scale) },
          },
        }),
      }),
      signal: AbortSignal.timeout(s.timeoutMs),
    });
    const body = (await res.json().catch(() => null)) as {
      choices?: { message?: { content?: string } }[];
      usage?: { prompt_tokens?: number; completion_tokens?: number };
    } | null;
    const usage = {
      promptTokens: body?.usage?.prompt_tokens ?? null,
      completionTokens: body?.usage?.completion_tokens ?? null,
    };
    if (!res.ok) return done({ ...usage, problem: `the judge answered HTTP ${res.status}` });
    const answer = body?.choices?.[0]?.message?.content;
    if (typeof answer !== 'string') return done({ ...usage, problem: 'the judge answered no message' });
    return done({ ...usage, answer });
  } catch (err) {
    const e = err as Error;
    const timedOut = e.name === 'TimeoutError';
    return done({ problem: timedOut ? `the judge did not answer in ${s.timeoutMs} ms` : `the judge: ${e.message}` });
  }
}

/**
 * A group's scores from the judge in one call (retried on an unreadable answer): each rollout's score mapped back by
 * the id its trajectory had, identical trajectories one score, an empty answer the scale's minimum without asking.
 * A judge that fails leaves its rollouts judge-failed (null), never 0.
 */
export async function judgeGroup(s: JudgeSettings, group: Trajectory[]): Promise<GroupJudgement> {
  const scores = new Map<string, Score | null>();
  const asked: Trajectory[] = [];
  for (const t of group)
    if (emptyAnswer(t)) scores.set(t.key, { score: s.scale.min, explanation: 'empty answer' });
    else asked.push(t);
  const calls: JudgeCall[] = [];
  let problem: string | null = null;
  if (asked.length === 0) return { scores, calls, problem };
  const prompt = judgePrompt(s.rubric, asked, s.scale, hex, shuffled);
  const ids = [...prompt.ids.keys()];
  for (let attempt = 0; attempt <= s.retries; attempt++) {
    s.budget.check();
    await s.slots.acquire();
    const c = await call(s, prompt.messages, ids).finally(() => s.slots.release());
    s.budget.spent += (c.promptTokens ?? 0) + (c.completionTokens ?? 0);
    calls.push(c);
    if (c.answer === null) {
      problem = c.problem;
      break; // a transport failure or a timeout is not retried here: the judge is down or slow, not confused
    }
    const verdict = readVerdict(c.answer, ids, s.scale);
    if (verdict.ok) {
      for (const [id, keys] of prompt.ids) for (const key of keys) scores.set(key, verdict.scores.get(id)!);
      return { scores, calls, problem: null };
    }
    c.problem = verdict.problem;
    problem = verdict.problem;
  }
  for (const t of asked) scores.set(t.key, null);
  return { scores, calls, problem };
}
