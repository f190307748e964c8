import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JUDGE_FAILED, Store } from '../../src/store/store.js';
import { alight } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { assistantTexts, type ScriptedJudge, startScriptedJudge, trajectoryTexts } from '../helpers/scripted-judge.js';
import { startScriptedUpstream } from '../helpers/scripted-upstream.js';

// `alight record --judge`: the examples' vowels harness (two turns, its own reward) against a scripted model whose
// answers repeat every five, one harness at a time (the same answers in the same order in every run), judged by a
// scripted judge that scores the answers' vowel share as the harness does.
const HARNESS = new URL('../../examples/vowels/harness.mjs', import.meta.url).pathname;
const answers = ['aei', 'bcd', 'oua', 'xyz', 'eee'];
const vowelShare = (texts: string[]) =>
  texts.reduce((a, t) => a + [...t.padEnd(8).slice(0, 8)].filter((c) => 'aeiou'.includes(c)).length / 8, 0) /
  texts.length;

let dir: string;
let judge: ScriptedJudge;
beforeAll(async () => {
  dir = tempDir();
  writeFileSync(
    join(dir, 'tasks.jsonl'),
    ['sky', 'sound'].map((id) => JSON.stringify({ id, question: `Question ${id}?` })).join('\n'),
  );
  // Scores each trajectory by its answers; asked about an "xyz" alone, it answers no JSON (a confused judge).
  judge = await startScriptedJudge((ids, body) => {
    const texts = trajectoryTexts(body);
    if (ids.length === 1 && texts.get(ids[0])!.includes('xyz')) return { text: 'I cannot score this.' };
    const scores = ids.map((id) => ({
      id,
      score: vowelShare(assistantTexts(texts.get(id)!)),
      explanation: `read ${id}`,
    }));
    return { text: JSON.stringify({ scores }) };
  });
});
afterAll(() => judge?.close());

/** One recorded run of 2 tasks × 3, judged; a fresh scripted model each time, so that its answers repeat. */
async function recordRun(run: string, ...more: string[]) {
  const upstream = await startScriptedUpstream({ reply: (i) => answers[i % answers.length] });
  try {
    const args = ['record', '--upstream', upstream.url, '--tasks', join(dir, 'tasks.jsonl'), '-n', '3'];
    const res = await alight(
      [...args, '--concurrency', '1', '--judge', judge.url, '--run', run, ...more, '--', 'node', HARNESS],
      {
        cwd: dir,
        timeoutMs: 120_000,
      },
    );
    expect(res.code, res.stderr).toBe(0);
  } finally {
    await upstream.close();
  }
  const store = Store.open(join(dir, '.alight', 'alight.db'));
  try {
    const rollouts = store.rolloutSummaries({ run });
    return {
      rollouts,
      rewards: rollouts.map((r) => store.lastReward(r.id)),
      failed: rollouts.filter((r) => store.events(r.id).some((e) => e.type === JUDGE_FAILED)).map((r) => r.id),
      failedWhy: rollouts.flatMap((r) =>
        store
          .events(r.id)
          .filter((e) => e.type === JUDGE_FAILED)
          .map((e) => JSON.parse(e.data).problem as string),
      ),
      calls: store.judge.calls(run),
      members: store.groupRewards(run, [...new Set(rollouts.map((r) => r.group_id!))], {
        failedAsZero: false,
        dropMissing: false,
      }),
    };
  } finally {
    store.close();
  }
}

/** The vowel share of rollout `i`'s two answers (one harness at a time: answers 2i and 2i + 1, repeating every 5). */
const expected = (i: number) => vowelShare([answers[(2 * i) % 5], answers[(2 * i + 1) % 5]]);

describe('alight record --judge', () => {
  it("judges each task's group in one call, keeps its score and reason, stores its calls apart; a re-run asks nothing", async () => {
    const first = await recordRun('judged', '--rubric', 'Vowels only.');
    expect(first.rollouts).toHaveLength(6);
    expect(judge.requests).toHaveLength(2);
    expect(judge.requests[0].messages[0].content).toMatch(/Rubric:\nVowels only\.$/);
    expect(first.failed).toEqual([]);
    for (const [i, reward] of first.rewards.entries()) {
      expect(reward).toMatchObject({ source: 'judge', reason: expect.stringMatching(/^read \w+$/) });
      expect(reward!.value).toBeCloseTo(expected(i), 6);
    }
    expect(first.calls).toHaveLength(2);
    expect(first.calls.every((c) => c.promptTokens === 100 && c.completionTokens === 10 && c.problem === null)).toBe(
      true,
    );
    expect(first.calls.flatMap((c) => c.rollouts).sort()).toEqual(first.rollouts.map((r) => r.id).sort());
    // traces show lists each reward with its source: the harness's own, then the judge's with its explanation.
    const shown = await alight(['traces', 'show', first.rollouts[0].id], { cwd: dir });
    expect(shown.stdout).toMatch(/^ {2}harness [\d.]+: "aei \| bcd"$/m);
    expect(shown.stdout).toMatch(new RegExp(`^ {2}judge ${first.rewards[0]!.value}: "read \\w+"$`, 'm'));
    expect(shown.stdout).toMatch(/^ {2}judge call \(judge\): 100 \+ 10 tokens, \d+ ms$/m);
    const again = await recordRun('judged-again', '--rubric', 'Vowels only.');
    expect(judge.requests).toHaveLength(2);
    expect(again.rewards.map((r) => r?.value)).toEqual(first.rewards.map((r) => r?.value));
  });

  it('scores rollout by rollout in single mode: the ones the judge fails are in no baseline and never scored 0', async () => {
    const before = judge.requests.length;
    const single = await recordRun('single', '--judge-mode', 'single');
    // One call each, the two "xyz" ones retried once; the other four were judged in the group run, but a single-mode
    // call is another question (the group's context is not the same), so nothing comes from the cache.
    expect(judge.requests.length - before).toBe(6 + 2);
    expect(single.failed).toHaveLength(2);
    expect(single.failedWhy).toEqual(['the judge answered no JSON object', 'the judge answered no JSON object']);
    expect(single.members.map((m) => m.id).sort()).toEqual(
      single.rollouts
        .filter((r) => !single.failed.includes(r.id))
        .map((r) => r.id)
        .sort(),
    );
    for (const [i, r] of single.rollouts.entries())
      if (single.failed.includes(r.id)) expect(single.rewards[i]?.source).toBe('harness');
      else expect(single.rewards[i]!.value).toBeCloseTo(expected(i), 6);
    expect(single.calls.filter((c) => c.problem === 'the judge answered no JSON object')).toHaveLength(4);
  });

  it("stops a group's straggler at the deadline and judges the group without it", async () => {
    // One rollout of the group (the first to take the lock) answers, then sleeps far past the deadline.
    const harness = join(dir, 'straggler.mjs');
    writeFileSync(
      harness,
      `import { openSync } from 'node:fs';
const res = await fetch(process.env.OPENAI_BASE_URL + '/chat/completions', {
  method: 'POST',
  headers: { 'content-type': 'application/json', authorization: 'Bearer ' + process.env.OPENAI_API_KEY },
  body: JSON.stringify({ model: 'policy', messages: [{ role: 'user', content: 'Say a vowel.' }] }),
});
await res.json();
let straggler = false;
try { openSync(process.argv[2], 'wx'); straggler = true; } catch {}
if (straggler) await new Promise((resolve) => setTimeout(resolve, 600_000));
`,
    );
    writeFileSync(join(dir, 'one.jsonl'), `${JSON.stringify({ id: 'one' })}\n`);
    writeFileSync(join(dir, 'alight.config.yaml'), `reward:\n  judge:\n    url: ${judge.url}\n    deadlineS: 2\n`);
    const upstream = await startScriptedUpstream({ reply: (i) => answers[i % answers.length] });
    const before = judge.requests.length;
    try {
      const args = [
        'record',
        '--upstream',
        upstream.url,
        '--tasks',
        join(dir, 'one.jsonl'),
        '-n',
        '3',
        '--run',
        'late',
      ];
      const res = await alight([...args, '--', 'node', harness, join(dir, 'lock')], { cwd: dir, timeoutMs: 300_000 });
      expect(res.code, res.stderr).toBe(0);
    } finally {
      await upstream.close();
    }
    const store = Store.open(join(dir, '.alight', 'alight.db'));
    try {
      const rollouts = store.rolloutSummaries({ run: 'late' });
      const late = rollouts.filter((r) => r.state === 'failed');
      expect(late.map((r) => r.error)).toEqual([expect.stringMatching(/^stopped at the judge's deadline/)]);
      expect(judge.requests.length - before).toBe(1);
      expect(trajectoryTexts(judge.requests.at(-1)!).size).toBe(2);
      const judged = rollouts.filter((r) => r.state === 'succeeded').map((r) => store.lastReward(r.id)?.source);
      expect(judged).toEqual(['judge', 'judge']);
    } finally {
      store.close();
    }
  });
});

describe('alight eval judge', () => {
  it('scores a recorded run after the fact, beside its own check: agreement, then the cache; the check stays the check', async () => {
    const upstream = await startScriptedUpstream({ reply: (i) => answers[i % answers.length] });
    try {
      const args = ['record', '--upstream', upstream.url, '--tasks', join(dir, 'tasks.jsonl'), '-n', '3'];
      const res = await alight([...args, '--concurrency', '1', '--run', 'unjudged', '--', 'node', HARNESS], {
        cwd: dir,
        timeoutMs: 120_000,
      });
      expect(res.code, res.stderr).toBe(0);
    } finally {
      await upstream.close();
    }
    const before = judge.requests.length;
    // A rubric of its own: the other tests judged the same answers, and the cache is keyed by rubric and content.
    const rubric = ['--rubric', 'Score the share of vowels in the answers.'];
    const judgeRun = () =>
      alight(['eval', 'judge', 'unjudged', '--judge', judge.url, ...rubric, '--json'], { cwd: dir });
    const first = await judgeRun();
    expect(first.code, first.stderr).toBe(0);
    const summary = JSON.parse(first.stdout);
    expect(summary).toMatchObject({ rollouts: 6, judged: 6, failed: 0, metrics: { judge_calls: 2 } });
    // The scripted judge scores the vowel share, as the harness's own reward does: they agree.
    expect(summary.verifiable.rollouts).toBe(6);
    expect(summary.verifiable.pearson).toBeCloseTo(1, 6);
    expect(judge.requests.length - before).toBe(2);
    const again = JSON.parse((await judgeRun()).stdout);
    expect(again.metrics).toMatchObject({ judge_calls: 0, judge_cached_groups: 2 });
    expect(again.verifiable).toEqual(summary.verifiable);
    expect(judge.requests.length - before).toBe(2);
    const text = await alight(['eval', 'judge', 'unjudged', '--judge', judge.url, ...rubric], { cwd: dir });
    expect(text.stdout).toMatch(/6 of 6 rollouts judged, 0 judge-failed/);
    expect(text.stdout).toMatch(/Pearson r 1\.000/);
    // Without a judge (and with no config naming one: another test of this file leaves one in its folder).
    const none = await alight(['eval', 'judge', 'unjudged'], { cwd: tempDir() });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no judge: pass --judge/);
    const missing = await alight(['eval', 'judge', 'nope', '--judge', judge.url], { cwd: dir });
    expect(missing.code).toBe(3);
    expect(missing.stderr).toMatch(/no run nope/);
  });
});
