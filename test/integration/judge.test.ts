import { afterEach, describe, expect, it } from 'vitest';
import { type JudgeSettings, judgeGroup, TokenBudget } from '../../src/judge/client.js';
import type { Trajectory } from '../../src/judge/prompt.js';
import { Slots } from '../../src/slots.js';
import { type JudgeReply, type ScriptedJudge, startScriptedJudge } from '../helpers/scripted-judge.js';

// The judge client against a scripted OpenAI-compatible judge on a real socket: what it sends, how it reads the
// answers, and what it does when the judge is wrong, slow or down.
let open: ScriptedJudge[] = [];
afterEach(async () => {
  await Promise.all(open.map((j) => j.close()));
  open = [];
});

async function scriptedJudge(reply: JudgeReply): Promise<ScriptedJudge> {
  const judge = await startScriptedJudge(reply);
  open.push(judge);
  return judge;
}

const settings = (url: string, more: Partial<JudgeSettings> = {}): JudgeSettings => ({
  endpoint: { url, model: 'judge' },
  rubric: 'The answer 42 scores 1.',
  scale: { min: 0, max: 1 },
  timeoutMs: 5000,
  retries: 1,
  maxTokens: 512,
  structured: true,
  slots: new Slots(4),
  budget: new TokenBudget(null),
  ...more,
});

const group = (answers: string[], prefix = 'r'): Trajectory[] =>
  answers.map((content, i) => ({
    key: `${prefix}${i}`,
    messages: [
      { role: 'user', content: 'What is 6 × 7?' },
      { role: 'assistant', content },
    ],
  }));

/** Scores each block by its text: 1 for the answer 42, else 0.1 × its last digit; in reverse order of the prompt. */
const byContent: JudgeReply = (ids, body) => {
  const text = body.messages[1].content;
  const scores = ids.map((id) => {
    const inside = new RegExp(`id=${id}>>\\n[\\s\\S]*?\\[assistant\\]\\n(\\d+)`).exec(text)![1];
    return { id, score: inside === '42' ? 1 : Number(inside.at(-1)) / 10, explanation: `said ${inside}` };
  });
  return { text: JSON.stringify({ scores: scores.reverse() }) };
};

describe('judging a group', () => {
  it('asks once for a group of 6 and maps each score back by id, identical answers sharing one', async () => {
    const judge = await scriptedJudge(byContent);
    const out = await judgeGroup(settings(judge.url), group(['41', '42', '43', '42', '45', '46']));
    expect(judge.requests).toHaveLength(1);
    expect(judge.requests[0].messages[1].content.match(/<<trajectory-/g)).toHaveLength(5);
    expect(Object.fromEntries([...out.scores].map(([k, s]) => [k, s?.score]))).toEqual({
      r0: 0.1,
      r1: 1,
      r2: 0.3,
      r3: 1,
      r4: 0.5,
      r5: 0.6,
    });
    expect(out.scores.get('r0')!.explanation).toBe('said 41');
    expect(out.calls[0]).toMatchObject({ promptTokens: 100, completionTokens: 10, problem: null });
  });

  it('retries an answer with 5 scores for 6 once, then leaves the group judge-failed, never 0', async () => {
    const judge = await scriptedJudge((ids) => ({
      text: JSON.stringify({ scores: ids.slice(1).map((id) => ({ id, score: 1 })) }),
    }));
    const out = await judgeGroup(settings(judge.url), group(['1', '2', '3', '4', '5', '6']));
    expect(judge.requests).toHaveLength(2);
    expect(out.problem).toBe('5 scores for 6 trajectories');
    expect([...out.scores.values()]).toEqual(Array(6).fill(null));
    expect(out.calls.map((c) => c.problem)).toEqual(['5 scores for 6 trajectories', '5 scores for 6 trajectories']);
  });

  it('leaves the group judge-failed on a timeout or an error status, and scores an empty answer 0 without asking', async () => {
    const slow = await scriptedJudge(() => ({ text: '{}', delayMs: 1000 }));
    const timedOut = await judgeGroup(settings(slow.url, { timeoutMs: 200 }), group(['1', '']));
    expect(timedOut.problem).toBe('the judge did not answer in 200 ms');
    expect(timedOut.scores.get('r0')).toBeNull();
    expect(timedOut.scores.get('r1')).toEqual({ score: 0, explanation: 'empty answer' });
    const down = await scriptedJudge(() => ({ status: 503, text: 'overloaded' }));
    const failed = await judgeGroup(settings(down.url), group(['1', '2']));
    expect(failed.problem).toBe('the judge answered HTTP 503');
    expect(down.requests).toHaveLength(1);
    const none = await scriptedJudge(byContent);
    await judgeGroup(settings(none.url), group(['', '  ']));
    expect(none.requests).toHaveLength(0);
  });

  it('keeps at most the limit in flight across groups, and stops loudly once the token budget is spent', async () => {
    const judge = await scriptedJudge((ids, body) => ({ ...byContent(ids, body), delayMs: 100 }));
    const shared = settings(judge.url, { slots: new Slots(2) });
    await Promise.all(Array.from({ length: 6 }, (_, g) => judgeGroup(shared, group(['41', '42'], `g${g}-`))));
    expect(judge.requests).toHaveLength(6);
    expect(judge.maxInFlight).toBe(2);
    const budget = new TokenBudget(150);
    await judgeGroup(settings(judge.url, { budget }), group(['42']));
    expect(budget.spent).toBe(110);
    await judgeGroup(settings(judge.url, { budget }), group(['42']));
    await expect(judgeGroup(settings(judge.url, { budget }), group(['42']))).rejects.toThrow(
      /token budget is spent \(220 of 150/,
    );
  });
});
