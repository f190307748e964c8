import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSafetensors } from '../../src/samples/safetensors.js';
import { Store } from '../../src/store/store.js';
import { writeByteTokenizer } from '../helpers/byte-tokenizer.js';
import { alight, BIN, FIXTURES } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { type ScriptedUpstream, startScriptedUpstream } from '../helpers/scripted-upstream.js';
import { makeSweRepo } from '../helpers/swe-repo.js';
import { tinyModel } from '../helpers/tiny-model.js';

// `alight ui` in a real browser (Debian's Chromium through playwright-core) over runs the tests record: a training run
// of the CPU trainer, a recorded run (two rollouts a task) whose model answers carry markup that must stay text and
// whose task `c` delegates to a sub-agent, and two eval runs.
const CALCULATOR = join(import.meta.dirname, '..', '..', 'examples', 'calculator');
const hostile = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> done';
let dir: string;
let db: string;
let upstream: ScriptedUpstream;
let ui: ChildProcess;
let url: string;
let tokenizer: string;
let browser: Browser;
let page: Page;
// Where the README's screenshots are written, when set.
const SHOTS = process.env.ALIGHT_UI_SCREENSHOTS;

beforeAll(async () => {
  dir = tempDir();
  db = join(dir, 'alight.db');
  // A chat template that drops earlier thinking: each later call's prompt breaks from the row (a `template` break).
  upstream = await startScriptedUpstream({
    stripThinking: true,
    reply: (i) => `<think>plan ${i}</think>${hostile} ${i}`,
  });
  tokenizer = writeByteTokenizer(dir);
  const tasks = join(dir, 'tasks.jsonl');
  writeFileSync(
    tasks,
    [
      { id: 'a', turns: 2 },
      { id: 'b', turns: 2, jitter: 1 },
      { id: 'c', turns: 2, subagent: true, jitter: 1 },
    ]
      .map((t) => JSON.stringify(t))
      .join('\n'),
  );
  const rec = await alight(
    [
      'record',
      '-n',
      '2',
      '--upstream',
      upstream.url,
      '--tasks',
      tasks,
      '--run',
      'rec',
      '--db',
      db,
      '--',
      process.execPath,
      join(FIXTURES, 'sdk-harness.mjs'),
    ],
    { timeoutMs: 120_000 },
  );
  expect(rec.code, rec.stderr).toBe(0);
  await recordCalculator();
  writeFileSync(
    join(dir, 'train.jsonl'),
    [
      { id: 'count', prompt: 'Count to three.' },
      { id: 'year', prompt: 'What year is it?' },
    ]
      .map((t) => JSON.stringify(t))
      .join('\n'),
  );
  const train = await alight(trainArgs('learn'), { cwd: dir, timeoutMs: 300_000 });
  expect(train.code, train.stderr).toBe(0);
  // An SFT run on every rollout of that one (two steps of the torch worker).
  const curate = ['samples', 'curate', '--run', 'learn', '--select', 'all', '--keep-truncated', '--out', 'curated'];
  const curated = await alight([...curate, '--db', db], { cwd: dir });
  expect(curated.code, curated.stderr).toBe(0);
  const sftArgs = ['sft', '--data', 'curated', '--model', tinyModel(1), '--epochs', '1', '--batch-size', '16'];
  const sft = await alight([...sftArgs, '--run', 'tune', '--db', db], { cwd: dir, timeoutMs: 300_000 });
  expect(sft.code, sft.stderr).toBe(0);
  // Two eval runs of the fixture repository: each fixes one instance and breaks the other.
  const fx = makeSweRepo(join(dir, 'swe'));
  for (const [run, actions] of [
    ['ev-a', ['fix', 'wrong']],
    ['ev-b', ['wrong', 'fix']],
  ] as const) {
    const file = join(dir, `${run}.jsonl`);
    writeFileSync(
      file,
      actions
        .map((a, i) => JSON.stringify({ ...fx.instance, instance_id: `acme__calc-${i + 1}`, harness_action: a }))
        .join('\n'),
    );
    const ev = await alight(
      [
        'eval',
        'swebench',
        '--tasks',
        file,
        '--repos',
        fx.repos,
        '--upstream',
        upstream.url,
        '--run',
        run,
        '--db',
        db,
        '--',
        process.execPath,
        join(FIXTURES, 'swe-harness.mjs'),
      ],
      { timeoutMs: 300_000 },
    );
    expect(ev.code, ev.stderr).toBe(0);
  }
  ui = spawn(process.execPath, [BIN, 'ui', '--db', db, '--tokenizer', tokenizer], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  url = await new Promise<string>((resolve, reject) => {
    let out = '';
    ui.stdout!.on('data', (d) => {
      out += d;
      const m = /alight ui: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (m) resolve(m[1]);
    });
    ui.on('exit', (code) => reject(new Error(`alight ui exited with ${code}`)));
  });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
}, 600_000);

/**
 * One episode of the calculator example's agent (the OpenAI Agents SDK, unmodified) against a scripted model with
 * known ids: it calls `calculate`, the harness runs the tool, and the model answers with the tool's result.
 */
async function recordCalculator(): Promise<void> {
  const model = await startScriptedUpstream({
    reply: (_i, body) =>
      (body.messages as { role: string }[]).at(-1)?.role === 'tool'
        ? 'The product is 86651705.'
        : { toolCalls: [{ name: 'calculate', arguments: '{"expression":"9233 * 9385"}' }] },
  });
  const tasks = join(dir, 'calculator.jsonl');
  writeFileSync(tasks, readFileSync(join(CALCULATOR, 'heldout.jsonl'), 'utf8').split('\n')[0]);
  try {
    const args = ['record', '--upstream', model.url, '--tasks', tasks, '--run', 'agent', '--db', db, '--'];
    const res = await alight([...args, process.execPath, join(CALCULATOR, 'harness.mjs')], { timeoutMs: 120_000 });
    expect(res.code, res.stderr).toBe(0);
  } finally {
    await model.close();
  }
}

afterAll(async () => {
  await browser?.close();
  ui?.kill('SIGINT');
  await upstream?.close();
});

const open = async (hash: string, name?: string) => {
  await page.goto(`${url}${hash}`);
  await page.waitForSelector(`main[data-ready="${hash}"]`);
  if (SHOTS && name) {
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  }
};
/** Three steps of the CPU trainer on the two prompts (`train.jsonl`), 4 rollouts a task, 2 tasks a step. */
const trainArgs = (run: string) => [
  ...['train', '--model', tinyModel(1), '--tasks', join(dir, 'train.jsonl'), '-n', '4', '--batch-size', '2'],
  ...['--steps', '3', '--run', run, '--db', db, '--', process.execPath, join(FIXTURES, 'digits-harness.mjs')],
];

/** `samples diagnose`'s breaks of the recorded run. */
async function diagnosed() {
  const res = await alight(['samples', 'diagnose', '--run', 'rec', '--db', db, '--tokenizer', tokenizer, '--json']);
  expect(res.code, res.stderr).toBe(0);
  return JSON.parse(res.stdout).breaks as {
    rollout_id: string;
    seq: number;
    row: number;
    position: number;
    diagnosis: { kind: string };
  }[];
}
const cells = (selector: string) => page.$$eval(selector, (tds) => tds.map((td) => td.textContent ?? ''));

describe('alight ui', () => {
  it('lists the runs with the numbers the store has', async () => {
    await open('#/', 'runs');
    const store = Store.open(db);
    const runs = store.listRuns();
    store.close();
    for (const r of runs) {
      const row = await cells(`tr[data-run="${r.name}"] td`);
      expect(row[0]).toBe(r.name);
      expect(row.slice(3, 7).map(Number)).toEqual([r.rollouts, r.succeeded, r.failed, r.calls]);
    }
  });

  it("shows a training run's steps and curves as the store has them", async () => {
    await open('#/run/learn', 'train-run');
    const store = Store.open(db);
    const steps = store.trainSteps('learn');
    const rollouts = store.countRollouts({ run: 'learn' });
    store.close();
    expect(steps).toHaveLength(3);
    const reward = (s: (typeof steps)[number]) => (s.metrics as { reward_mean: number }).reward_mean;
    const header = await cells('#steps th');
    const column = header.indexOf('reward_mean');
    for (const s of steps) {
      const row = await cells(`#steps tr[data-step="${s.step}"] td`);
      expect(Number(row[column])).toBeCloseTo(reward(s), 4);
    }
    const points = JSON.parse((await page.getAttribute('.curve[data-metric="reward_mean"]', 'data-points'))!);
    expect(points).toEqual(steps.map((s) => [s.step, reward(s)]));
    expect(await page.textContent('h2:has-text("Rollouts")')).toBe(`Rollouts (${rollouts})`);
  });

  it('renders markup from the model as text: no script runs, no image loads; the CSP says so too', async () => {
    const res = await page.goto(url);
    expect(res!.headers()['content-security-policy']).toContain("script-src 'self'");
    const store = Store.open(db);
    const [first] = store.rolloutSummaries({ run: 'rec' });
    store.close();
    await open(`#/rollout/${first.id}`, 'rollout');
    const text = await page.textContent('main');
    expect(text).toContain('<script>window.__pwned = 1</script>');
    expect(text).toContain('<img src=x onerror="window.__pwned = 2">');
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.$$('main img, main script')).toHaveLength(0);
    expect(await page.$$('.call')).toHaveLength(first.calls);
  });

  it('follows a training run while it goes: new steps appear on the open page', async () => {
    const train = alight(trainArgs('live'), { cwd: dir, timeoutMs: 300_000 });
    // Opened as soon as the run exists, before its first step ends; then only waited on, never reloaded.
    const store = Store.open(db);
    while (!store.getRun('live')) await new Promise((r) => setTimeout(r, 100));
    const before = store.trainSteps('live').length;
    store.close();
    await open('#/run/live');
    expect(before).toBeLessThan(3);
    const shown = page.waitForSelector('#steps tr[data-step]:nth-child(3)', { timeout: 300_000 });
    const done = await train;
    expect(done.code, done.stderr).toBe(0);
    await shown;
    expect(await page.$$('#steps tr[data-step]')).toHaveLength(3);
    expect(await page.evaluate(() => location.hash)).toBe('#/run/live');
  });

  it("marks each merge break in the rollout's training rows at the token samples diagnose names", async () => {
    const breaks = await diagnosed();
    const store = Store.open(db);
    const byTask = (task: string) => store.rolloutSummaries({ run: 'rec' }).find((r) => r.task_id === task)!.id;
    const [plain, delegating] = [byTask('a'), byTask('c')];
    store.close();
    for (const id of [plain, delegating]) {
      const mine = breaks.filter((b) => b.rollout_id === id);
      expect(mine.length).toBeGreaterThan(0);
      await open(`#/rollout/${id}`, id === plain ? 'rollout-rows' : undefined);
      for (const b of mine) {
        const mark = `.row[data-row="${b.row}"] .break[data-seq="${b.seq}"]`;
        expect(await page.getAttribute(mark, 'data-kind')).toBe(b.diagnosis.kind);
        // The token right after the mark is the first one that differs.
        const next = await page.$eval(mark, (m) => (m.nextElementSibling as HTMLElement | null)?.dataset.i);
        expect(Number(next)).toBe(b.position);
      }
      if (id === plain) expect(mine.map((b) => b.diagnosis.kind)).toEqual(['template']);
    }
    // The sub-agent's conversation is a row of its own, begun by a new-context break; the main one breaks at its
    // template as task a's does.
    expect(breaks.filter((b) => b.rollout_id === delegating).map((b) => b.diagnosis.kind)).toEqual(
      expect.arrayContaining(['new-context', 'template']),
    );
    const rows = await page.$$eval('.row', (r) => r.map((x) => x.textContent ?? ''));
    expect(rows.filter((r) => r.includes('You are a sub-agent.'))).toHaveLength(1);
    expect(rows.filter((r) => r.includes('You are a test agent.')).length).toBeGreaterThan(0);
    // Sampled tokens are marked and decoded: the model's own words are among them.
    const sampled = (await page.$$eval('.row .tok.sampled', (s) => s.map((x) => x.textContent))).join('');
    expect(sampled).toContain('window.__pwned');
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
  });

  it("shows an agent's episode as one row whose tool result is prompt, out of the loss, between sampled turns", async () => {
    const store = Store.open(db);
    const [episode] = store.rolloutSummaries({ run: 'agent' });
    store.close();
    expect(episode.reward).toBe(1);
    await open(`#/rollout/${episode.id}`, 'agent-rows');
    expect(await page.$$eval('.row', (r) => r.length)).toBe(1);
    const tokens = await page.$$eval('.row .tok', (s) =>
      s.map((x) => ({ text: x.textContent ?? '', sampled: x.classList.contains('sampled') })),
    );
    // The row's spans, prompt or sampled in turn: the question, the call, the tool's turn, the answer.
    const spans: { text: string; sampled: boolean }[] = [];
    for (const t of tokens) {
      if (spans.at(-1)?.sampled === t.sampled) spans[spans.length - 1].text += t.text;
      else spans.push({ ...t });
    }
    expect(spans.map((x) => x.sampled)).toEqual([false, true, false, true]);
    expect(spans[1].text).toContain('<tool_call>');
    expect(spans[1].text).toContain('"name": "calculate"');
    expect(spans[2].text).toContain('tool');
    expect(spans[2].text).toContain('86651705');
    expect(spans[3].text).toContain('The product is 86651705.');
  });

  it("filters a run's rollouts: failed, zero-variance groups, merge breaks", async () => {
    const store = Store.open(db);
    const all = store.rolloutSummaries({ run: 'rec' });
    store.close();
    const rewardsOf = (g: string | null) => all.filter((r) => r.group_id === g).map((r) => r.reward);
    const flat = all.filter((r) => new Set(rewardsOf(r.group_id)).size === 1 && rewardsOf(r.group_id).length > 1);
    const broken = new Set((await diagnosed()).map((b) => b.rollout_id));
    // Task a's two rollouts both got reward 1; b and c's got jittered rewards.
    expect(flat.map((r) => r.task_id)).toEqual(['a', 'a']);
    for (const [filter, expected] of [
      ['zero-variance', flat.map((r) => r.id)],
      ['breaks', all.filter((r) => broken.has(r.id)).map((r) => r.id)],
      ['failed', []],
    ] as const) {
      await open(`#/run/rec?offset=0&filter=${filter}`, filter === 'breaks' ? 'filter-breaks' : undefined);
      expect(
        await page.$$eval('#rollouts tr[data-rollout]', (t) => t.map((r) => r.getAttribute('data-rollout'))),
      ).toEqual(expected);
      expect(await page.textContent('h2:has-text("Rollouts")')).toContain(`Rollouts (${expected.length}:`);
    }
  });

  it('shows each token of a trained rollout with the advantage and loss weight its step trained it with', async () => {
    // A rollout the steps trained with a non-zero advantage when there is one (the tiny policy's rewards vary).
    const candidates = [0, 1, 2].flatMap((step) => {
      const file = readSafetensors(join(dir, 'runs', 'learn', 'batches', `step-${step}.safetensors`));
      const meta = JSON.parse(file.metadata.alight) as { rollouts: { rollout_id: string }[] };
      const t = file.tensors;
      const [owner, offsets, mask] = [t.rollout_index as Int32Array, t.row_offsets as BigInt64Array, t.loss_mask];
      const span = (b: number): [number, number] => [Number(offsets[b]), Number(offsets[b + 1])];
      return meta.rollouts.map((r, index) => {
        const mine = [...owner.keys()].filter((b) => owner[b] === index);
        const first = span(mine[0])[0] + (mask as Uint8Array).subarray(...span(mine[0])).indexOf(1);
        return {
          id: r.rollout_id,
          step,
          weights: mine.flatMap((b) => [...(t.loss_weights as Float32Array).subarray(...span(b))]),
          advantage: (t.advantages as Float32Array)[first],
        };
      });
    });
    const { id, step, weights, advantage } = candidates.find((c) => c.advantage !== 0) ?? candidates[0];
    await open(`#/rollout/${id}`, 'trained-rows');
    const shown = await page.$$eval('.row .tok', (s) =>
      s.map((x) => ({ weight: Number((x as HTMLElement).dataset.weight), sampled: x.classList.contains('sampled') })),
    );
    expect(shown.map((x) => x.weight)).toEqual(weights.map((w) => Math.fround(w)));
    expect(shown.filter((x) => x.weight > 0).every((x) => x.sampled)).toBe(true);
    expect(weights.some((w) => w > 0)).toBe(true);
    const summary = await page.textContent('#rows p');
    expect(summary).toContain(`trained in step ${step}`);
    expect(summary).toContain(`advantage ${Number.isInteger(advantage) ? advantage : advantage.toFixed(4)}`);
  });

  it("shows an SFT run's loss and its examples, each token by token with exactly its loss mask marked", async () => {
    const file = readSafetensors(join(dir, 'curated', 'train.safetensors'));
    const meta = JSON.parse(file.metadata.alight) as { rollouts: { rollout_id: string }[] };
    const t = file.tensors as unknown as {
      loss_mask: Uint8Array;
      row_offsets: BigInt64Array;
      rollout_index: Int32Array;
    };
    await open('#/run/tune', 'sft-run');
    expect(await page.textContent('h2:has-text("Examples")')).toBe(`Examples (${meta.rollouts.length})`);
    expect(await page.$$('.curve[data-metric="loss"]')).toHaveLength(1);
    expect(await cells('#examples tr[data-example] td:nth-child(2)')).toEqual(meta.rollouts.map((r) => r.rollout_id));
    // The example with the most tokens in its loss: its page marks exactly the file's mask, row by row.
    const masks = meta.rollouts.map(() => [] as number[][]);
    for (let b = 0; b < t.rollout_index.length; b++)
      masks[t.rollout_index[b]].push([...t.loss_mask.slice(Number(t.row_offsets[b]), Number(t.row_offsets[b + 1]))]);
    const sum = (m: number[][]) => m.flat().reduce((a, x) => a + x, 0);
    const index = masks.reduce((best, m, i) => (sum(m) > sum(masks[best]) ? i : best), 0);
    await open(`#/example/tune/${index}`, 'sft-example');
    const shown = await page.$$eval('#rows .row', (rows) =>
      rows.map((row) => [...row.querySelectorAll('.tok')].map((s) => (s.classList.contains('sampled') ? 1 : 0))),
    );
    expect(shown).toEqual(masks[index]);
    expect(sum(masks[index])).toBeGreaterThan(0);
    // Its rollout is in this store: the link leads to it.
    await page.click(`a[href="#/rollout/${meta.rollouts[index].rollout_id}"]`);
    await page.waitForSelector(`main[data-ready="#/rollout/${meta.rollouts[index].rollout_id}"]`);
  });

  it("shows an eval run's attempts, each one's diff and test log, and two runs paired", async () => {
    await open('#/run/ev-a', 'eval-run');
    expect(await cells('#attempts tr[data-instance="acme__calc-1"] td')).toEqual(
      expect.arrayContaining(['acme__calc-1', '0', 'resolved']),
    );
    expect((await cells('#attempts tr[data-instance="acme__calc-2"] td'))[2]).toBe('unresolved');
    await open('#/eval/ev-a/acme__calc-1/0', 'eval-attempt');
    expect(await page.textContent('#patch')).toContain('+    return a + b');
    expect(await page.textContent('#log')).toMatch(/PASSED tests\/test_calc.py::test_add/);
    await open('#/compare/ev-a/ev-b', 'compare');
    // Each run resolved the instance the other did not: 2 in both, 1 only each side, p = 1.
    expect((await cells('#paired td')).map(Number)).toEqual([2, 0, 1, 1, 0, 1]);
  });

  it('refuses a request that names another host (DNS rebinding)', async () => {
    // fetch sets Host itself: a raw request, as a rebound name would arrive.
    const status = await new Promise<number | undefined>((resolve, reject) =>
      get(url, { headers: { host: 'evil.example' } }, (res) => {
        res.resume();
        resolve(res.statusCode);
      }).on('error', reject),
    );
    expect(status).toBe(403);
  });
});
