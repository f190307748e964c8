import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { alight, BIN, FIXTURES } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { type ScriptedUpstream, startScriptedUpstream } from '../helpers/scripted-upstream.js';
import { tinyModel } from '../helpers/tiny-model.js';

// `alight ui` in a real browser (Debian's Chromium through playwright-core) over runs the tests record: a training run
// of the CPU trainer and a recorded run whose model answers carry markup that must stay text.
const hostile = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> done';
let dir: string;
let db: string;
let upstream: ScriptedUpstream;
let ui: ChildProcess;
let url: string;
let browser: Browser;
let page: Page;
// Where the README's screenshots are written, when set.
const SHOTS = process.env.ALIGHT_UI_SCREENSHOTS;

beforeAll(async () => {
  dir = tempDir();
  db = join(dir, 'alight.db');
  upstream = await startScriptedUpstream({ reply: (i) => `${hostile} ${i}` });
  const tasks = join(dir, 'tasks.jsonl');
  writeFileSync(
    tasks,
    [
      { id: 'a', turns: 2 },
      { id: 'b', turns: 2 },
    ]
      .map((t) => JSON.stringify(t))
      .join('\n'),
  );
  const rec = await alight(
    [
      'record',
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
  const trainTasks = join(dir, 'train.jsonl');
  writeFileSync(
    trainTasks,
    [
      { id: 'count', prompt: 'Count to three.' },
      { id: 'year', prompt: 'What year is it?' },
    ]
      .map((t) => JSON.stringify(t))
      .join('\n'),
  );
  const train = await alight(
    [
      'train',
      '--model',
      tinyModel(1),
      '--tasks',
      trainTasks,
      '-n',
      '4',
      '--batch-size',
      '2',
      '--steps',
      '3',
      '--run',
      'learn',
      '--db',
      db,
      '--',
      process.execPath,
      join(FIXTURES, 'digits-harness.mjs'),
    ],
    { cwd: dir, timeoutMs: 300_000 },
  );
  expect(train.code, train.stderr).toBe(0);
  ui = spawn(process.execPath, [BIN, 'ui', '--db', db], { stdio: ['ignore', 'pipe', 'pipe'] });
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
