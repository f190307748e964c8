import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../src/process/launch.js';
import { Store } from '../../src/store/store.js';
import { alight, BIN, FIXTURES, readJsonl } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { type ScriptedUpstream, startScriptedUpstream } from '../helpers/scripted-upstream.js';
import { makeSweRepo } from '../helpers/swe-repo.js';
import { tinyModel } from '../helpers/tiny-model.js';

// From cleaned tasks to a training set on the fixture repository (a real git repo with a pytest suite): each task's
// environment validated with the local grader, the policy's harness probed k = 4 times per task, a selection by solve
// rate, the export, and a training step on what was kept.
let upstream: ScriptedUpstream;
let root: string;
let fx: ReturnType<typeof makeSweRepo>;
beforeAll(async () => {
  upstream = await startScriptedUpstream({ reply: (i) => `answer ${i}` });
  root = tempDir();
  fx = makeSweRepo(root);
});
afterAll(async () => upstream?.close());

/** A new file in a patch: makes each task's gold patch its own (dedupe joins equal patches), still a fix. */
const withNote = (patch: string, n: number): string =>
  `${patch}diff --git a/NOTE_${n} b/NOTE_${n}\nnew file mode 100644\n--- /dev/null\n+++ b/NOTE_${n}\n@@ -0,0 +1 @@\n+${n}\n`;

/** A project folder with these tasks (fixture rows with overrides) imported into its store. */
async function project(name: string, rows: Record<string, unknown>[]): Promise<{ dir: string; db: string }> {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'tasks.jsonl');
  writeFileSync(
    file,
    rows.map((r, i) => JSON.stringify({ ...fx.instance, patch: withNote(fx.instance.patch, i), ...r })).join('\n'),
  );
  const db = join(dir, 'alight.db');
  const res = await alight(['data', 'import', file, '--db', db]);
  expect(res.code, res.stderr).toBe(0);
  return { dir, db };
}

const data = async (p: { dir: string; db: string }, ...args: string[]) => {
  const res = await alight(['data', ...args, '--db', p.db], { cwd: p.dir, timeoutMs: 300_000 });
  expect(res.code, res.stderr).toBe(0);
  return res;
};

describe('alight data validate', () => {
  it('gives each environment its verdict: valid, gold unresolved, F2P passing at base, tests that do not run', async () => {
    const p = await project('validate', [
      { instance_id: 'acme__calc-1', problem_statement: 'one: a valid task' },
      { instance_id: 'acme__calc-2', patch: fx.predictions.wrong.patch, problem_statement: 'two: gold wrong' },
      {
        instance_id: 'acme__calc-3',
        FAIL_TO_PASS: JSON.stringify(['tests/test_calc.py::test_mul']),
        PASS_TO_PASS: '[]',
        problem_statement: 'three: F2P passes at base',
      },
      { instance_id: 'acme__calc-4', test_cmd: 'true', problem_statement: 'four: the tests do not run' },
    ]);
    const res = await data(p, 'validate', '--repos', fx.repos, '--workers', '2', '--json');
    expect(JSON.parse(res.stdout)).toMatchObject({
      checked: 4,
      validated: 4,
      reused: 0,
      dropped: 3,
      byVerdict: { valid: 1, 'gold-unresolved': 1, 'f2p-passes-without-fix': 1, 'tests-do-not-run': 1 },
    });
    const explain = async (id: string) => (await data(p, 'explain', id)).stdout;
    expect(await explain('acme__calc-1')).toMatch(/: kept\n {2}validated \(local, [\d.]+ s\): valid/);
    expect(await explain('acme__calc-2')).toMatch(
      /validate invalid-env: gold-unresolved: failing with the gold patch: tests\/test_calc.py::test_add/,
    );
    expect(await explain('acme__calc-3')).toContain(
      'f2p-passes-without-fix: passing at the base: tests/test_calc.py::test_mul',
    );
    expect(await explain('acme__calc-4')).toContain('invalid-env: tests-do-not-run');
    // Resumable: a second run grades nothing again, and keeps the same verdicts.
    const again = JSON.parse((await data(p, 'validate', '--repos', fx.repos, '--json')).stdout);
    expect(again).toMatchObject({ validated: 0, reused: 4, dropped: 3 });
    expect((await data(p, 'stats')).stdout).toMatch(/validate\s+invalid-env\s+3/);
  }, 300_000);

  it('validates a SWE-smith row with its bug patch reversed', async () => {
    // The fixture's gold patch turned around is a bug patch: `a + b` to `a - b`.
    const bug = fx.instance.patch
      .replace('-    return a - b', '-    return a + TMP')
      .replace('+    return a + b', '+    return a - b')
      .replace('-    return a + TMP', '-    return a + b');
    const p = await project('smith', [{ instance_id: 'acme__calc-9', patch: bug, patch_kind: 'bug' }]);
    const res = JSON.parse((await data(p, 'validate', '--repos', fx.repos, '--json')).stdout);
    expect(res.byVerdict).toEqual({ valid: 1 });
  }, 120_000);
});

describe('the recipe: validate, probe, select, export, train', () => {
  it('probes k = 4 times, keeps the mixed band and the unsolved asked for, exports them, and trains on them', async () => {
    // Solved 4/4, 2/4, 1/4, 0/4 and 0/4 by the harness below; a sixth task's environment is broken.
    const fixes = [4, 2, 1, 0, 0];
    const p = await project('recipe', [
      ...fixes.map((n, i) => ({
        instance_id: `acme__calc-${i + 1}`,
        harness_fixes: n,
        problem_statement: `task ${i + 1}: add(2, 3) returns -1 instead of 5.`,
      })),
      { instance_id: 'acme__calc-6', patch: fx.predictions.wrong.patch, problem_statement: 'task 6: broken env.' },
    ]);
    for (const stage of ['clean', 'dedupe', 'decontaminate']) await data(p, stage);
    await data(p, 'validate', '--repos', fx.repos);
    const ordinals = join(p.dir, 'ordinals');
    mkdirSync(ordinals);
    const probe = await alight(
      [
        ...['data', 'probe', '-k', '4', '--repos', fx.repos, '--upstream', upstream.url, '--run', 'probe-1'],
        ...['--db', p.db, '--json', '--', process.execPath, join(FIXTURES, 'swe-harness.mjs')],
      ],
      { cwd: p.dir, env: { ALIGHT_TEST_ORDINAL_DIR: ordinals }, timeoutMs: 300_000 },
    );
    expect(probe.code, probe.stderr).toBe(0);
    expect(JSON.parse(probe.stdout)).toEqual({
      run: 'probe-1',
      k: 4,
      tasks: 5,
      passCounts: { '4/4': 1, '2/4': 1, '1/4': 1, '0/4': 2 },
    });
    const select = JSON.parse((await data(p, 'select', '--add-unsolved', '1', '--val', '1', '--json')).stdout);
    expect(select).toMatchObject({
      run: 'probe-1',
      checked: 5,
      kept: 2,
      heldOut: 1,
      bands: { mixed: { tasks: 2 }, unsolved: { tasks: 2 }, solved: { tasks: 1, kept: 0 } },
      byRule: { 'solve-rate': 1, unsolved: 1, 'held-out': 1 },
    });
    const explain = (await data(p, 'explain', 'acme__calc-1')).stdout;
    expect(explain).toMatch(/select solve-rate: solved 4\/4/);
    expect(explain).toContain('probe probe-1: solved 4/4');
    await data(p, 'export', '--out', join(p.dir, 'train.jsonl'));
    await data(p, 'export', '--held-out', '--out', join(p.dir, 'val.jsonl'));
    const train = readJsonl<{ instance_id: string }>(join(p.dir, 'train.jsonl')).map((t) => t.instance_id);
    const val = readJsonl<{ instance_id: string }>(join(p.dir, 'val.jsonl')).map((t) => t.instance_id);
    expect(train).toHaveLength(2);
    expect(val).toHaveLength(1);
    // The three chosen: the two mixed tasks and one of the unsolved ones, split 2 / 1.
    const chosen = [...train, ...val].sort();
    expect(chosen.slice(0, 2)).toEqual(['acme__calc-2', 'acme__calc-3']);
    expect(['acme__calc-4', 'acme__calc-5']).toContain(chosen[2]);
    // train --from-db takes exactly the training part.
    const harness = join(p.dir, 'reward-harness.mjs');
    writeFileSync(
      harness,
      `const task = JSON.parse(process.env.ALIGHT_TASK_JSON);
      const res = await fetch(process.env.OPENAI_BASE_URL + '/chat/completions', { method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer ' + process.env.OPENAI_API_KEY },
        body: JSON.stringify({ model: 'policy', max_tokens: 4, messages: [{ role: 'user', content: task.problem_statement }] }) });
      await fetch(process.env.ALIGHT_REWARD_URL, { method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ value: res.ok ? 1 : 0 }) });\n`,
    );
    const trained = await alight(
      [
        ...['train', '--model', tinyModel(1), '--from-db', '-n', '2', '--batch-size', '2', '--steps', '1'],
        ...['--run', 'swe', '--db', p.db, '--', process.execPath, harness],
      ],
      { cwd: p.dir, timeoutMs: 300_000 },
    );
    expect(trained.code, trained.stderr).toBe(0);
    const store = Store.open(p.db);
    const tasks = store.db.prepare(`SELECT DISTINCT task_id AS t FROM rollouts WHERE run = 'swe'`).pluck().all();
    store.close();
    expect(tasks.sort()).toEqual([...train].sort());
    expect(readFileSync(join(p.dir, 'train.jsonl'), 'utf8')).not.toContain('acme__calc-6');
    // Validating again (nothing to grade) re-derives its drops, which clears the selection: it says so.
    const again = await data(p, 'validate', '--repos', fx.repos);
    expect(again.stdout).toContain(
      'this cleared the verdicts of select (the training selection and its held-out tasks): run alight data select again',
    );
  }, 600_000);
});

describe('alight init --template swe: recipe.sh', () => {
  it('runs the whole recipe on the fixture repository with a scripted model, each step as written', async () => {
    const dir = join(root, 'swe-project');
    const init = await alight(['init', '--template', 'swe', dir]);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain('sh recipe.sh');
    mkdirSync(join(dir, 'repos'));
    cpSync(join(fx.repos, 'acme__calc'), join(dir, 'repos', 'acme__calc'), { recursive: true });
    // Five tasks the model fixes on its first 4, 2, 1, 0 and 0 attempts; a sixth whose gold patch is wrong.
    const fixes = [4, 2, 1, 0, 0];
    const rows = [
      ...fixes.map((n, i) => ({
        ...fx.instance,
        instance_id: `acme__calc-${i + 1}`,
        patch: withNote(fx.instance.patch, i),
        problem_statement: `Task ${i + 1}: add(2, 3) returns -1 instead of 5 (fixes ${n}).`,
      })),
      {
        ...fx.instance,
        instance_id: 'acme__calc-6',
        patch: fx.predictions.wrong.patch,
        problem_statement: 'Task 6: its gold patch is the wrong fix.',
      },
    ];
    writeFileSync(join(dir, 'tasks.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n'));
    const attempts = new Map<string, number>();
    const model = await startScriptedUpstream({
      reply: (_, body) => {
        const messages = body.messages as { content: string }[];
        if (messages.length > 2) return 'SUBMIT';
        const task = /Task (\d+): .*\(fixes (\d)\)/.exec(messages.map((m) => m.content).join('\n'));
        if (!task) return 'SUBMIT';
        const seen = attempts.get(task[1]) ?? 0;
        attempts.set(task[1], seen + 1);
        return seen < Number(task[2]) ? "```bash\nsed -i 's/a - b/a + b/' calc.py\n```" : 'SUBMIT';
      },
    });
    try {
      const res = await run({
        command: 'sh',
        args: ['recipe.sh'],
        stdout: { tail: 1 << 20 },
        stderr: { tail: 1 << 20 },
        cwd: dir,
        env: {
          ...process.env,
          ALIGHT: `${process.execPath} ${BIN}`,
          ALIGHT_CLI: BIN,
          TASKS: 'tasks.jsonl',
          UPSTREAM: model.url,
          EVAL_UPSTREAM: model.url, // the trained tiny policy cannot fix anything: the eval step runs on the script
          ADD_UNSOLVED: '1',
          VAL: '1',
          CONCURRENCY: '2',
          SWE_AGENT_TURNS: '2',
          SWE_AGENT_MAX_TOKENS: '32', // the tiny policy's context is 1024 tokens
          TRAIN_ARGS: `--backend torch --model ${tinyModel(1)} -n 2 --batch-size 2 --steps 1 --concurrency 4`,
        },
        timeoutMs: 600_000,
      });
      expect(res.exitCode, res.stderr).toBe(0);
      expect(res.stdout).toMatch(/valid\s+5\n\s*gold-unresolved\s+1/);
      expect(res.stdout).toMatch(/probe probe: 5 tasks × 4 attempts/);
      expect(res.stdout).toMatch(/from probe probe: 5 tasks, 2 kept for training, 1 held out/);
      expect(readJsonl(join(dir, 'train.jsonl'))).toHaveLength(2);
      expect(readJsonl(join(dir, 'val.jsonl'))).toHaveLength(1);
      const store = Store.open(join(dir, '.alight', 'alight.db'));
      const steps = store.db.prepare('SELECT count(*) FROM train_steps').pluck().get();
      store.close();
      expect(steps).toBe(1);
      expect(existsSync(join(dir, '.alight', 'runs', 'eval-val', 'eval', 'summary.json'))).toBe(true);
    } finally {
      await model.close();
    }
  }, 900_000);
});
