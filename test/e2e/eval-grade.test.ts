import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { containerPids, defaultImage, runtimes } from '../../src/eval/grade/container.js';
import { freshWorkspace, git, repoSource, workspaceDiff } from '../../src/eval/grade/workspace.js';
import { alight } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { makeSweRepo } from '../helpers/swe-repo.js';

// The local grader on a real git repository with a pytest suite: each prediction grades as SWE-bench would, and the
// reward-hacking guards hold. Each case is its own run, since a run's instance ids must be unique.
// A container's pids bound, on cgroup v1 or v2.
const pidsMaxFile = 'cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max';

describe('alight eval grade', () => {
  const root = tempDir();
  const fx = makeSweRepo(root);

  const grade = async (
    patch: string | null,
    extra: string[] = [],
    id = fx.instance.instance_id,
    env?: NodeJS.ProcessEnv,
  ) => {
    const preds = join(root, `preds-${Math.random().toString(36).slice(2)}.jsonl`);
    writeFileSync(preds, `${JSON.stringify({ instance_id: id, model_name_or_path: 'test', model_patch: patch })}\n`);
    const out = join(root, `out-${Math.random().toString(36).slice(2)}`);
    const inputs = ['--predictions', preds, '--tasks', fx.tasksFile, '--repos', fx.repos, '--out', out];
    const res = await alight(['eval', 'grade', ...inputs, '--json', ...extra], { env });
    expect(res.code, res.stderr).toBe(0);
    const summary = JSON.parse(res.stdout);
    const report = JSON.parse(readFileSync(join(out, id, 'report.json'), 'utf8'))[id];
    return { summary, report, out };
  };

  for (const [name, p] of Object.entries(fx.predictions)) {
    it(`grades the ${name} prediction ${p.status}${p.flagged ? ', flagged' : ''}`, async () => {
      const { summary, report } = await grade(p.patch);
      expect(report.status, JSON.stringify(report)).toBe(p.status);
      expect(summary.schema_version).toBe(2);
      expect(summary[`${p.status}_instances`]).toBe(1);
      expect(report.guard.length > 0).toBe(Boolean(p.flagged));
      if (p.status === 'resolved') {
        expect(report.tests_status).toEqual({
          FAIL_TO_PASS: { success: ['tests/test_calc.py::test_add'], failure: [] },
          PASS_TO_PASS: { success: ['tests/test_calc.py::test_mul'], failure: [] },
        });
      }
      if (name === 'malformed') expect(report.error).toBe('patch apply failed');
      if (name === 'forged')
        expect(report.error).toMatch(/tests\/test_calc.py::test_add is reported both passing and failing/);
    }, 60_000);
  }

  it('would be fooled by the conftest hook if test edits were allowed: the guard is what stops it', async () => {
    const { report } = await grade(fx.conftest, ['--allow-test-edits']);
    expect(report.guard).toEqual([
      { file: 'conftest.py', reason: 'conftest.py (pytest hooks can rewrite outcomes)', removed: false },
    ]);
    expect(report.status).toBe('resolved');
  }, 60_000);

  it('never shows the agent the future: the workspace holds only ' +
    'the base tree, one commit; markers and exit status logged', async () => {
    const ws = join(root, 'ws');
    freshWorkspace(repoSource(fx.repos, 'acme/calc'), fx.base, ws);
    expect(git(ws, ['rev-list', '--all', '--count']).trim()).toBe('1');
    expect(readFileSync(join(ws, 'calc.py'), 'utf8')).toContain('return a - b');
    // the fix commit
    expect(() => git(ws, ['cat-file', '-e', git(`${fx.repos}/acme__calc`, ['rev-parse', 'HEAD']).trim()])).toThrow();
    writeFileSync(join(ws, 'new.py'), 'x = 1\n');
    expect(workspaceDiff(ws)).toContain('+++ b/new.py');
    const { report, out } = await grade(fx.instance.patch);
    expect(report.status).toBe('resolved');
    const log = readFileSync(join(out, fx.instance.instance_id, 'test_output.txt'), 'utf8');
    expect(log).toMatch(
      />>>>> Start Test Output[\s\S]*PASSED tests\/test_calc.py::test_add[\s\S]*>>>>> End Test Output[\s\S]*>>>>> Test Exit Code: 0/,
    );
  }, 60_000);

  it('serves as a reward command: 1 for a workspace whose ' +
    'diff resolves the task, 0 otherwise, the reason on stderr', async () => {
    const ws = join(root, 'agent-ws');
    freshWorkspace(repoSource(fx.repos, 'acme/calc'), fx.base, ws);
    const reward = () =>
      alight(['eval', 'reward', '--repos', fx.repos], {
        cwd: ws,
        env: { ALIGHT_TASK_JSON: JSON.stringify(fx.instance) },
      });
    const before = await reward();
    expect([before.stdout.trim(), before.stderr]).toEqual(['0', 'alight eval reward: acme__calc-1 empty_patch\n']);
    writeFileSync(join(ws, 'calc.py'), readFileSync(join(ws, 'calc.py'), 'utf8').replace('a - b', 'a + b'));
    const after = await reward();
    expect([after.stdout.trim(), after.stderr]).toEqual(['1', 'alight eval reward: acme__calc-1 resolved\n']);
  }, 60_000);

  it('compares two runs per instance with an exact McNemar test', async () => {
    const ids = Array.from({ length: 12 }, (_, i) => `i${i}`);
    const a = join(root, 'a.json');
    const b = join(root, 'b.json');
    writeFileSync(a, JSON.stringify({ submitted_ids: ids, resolved_ids: ids.slice(0, 2) }));
    writeFileSync(b, JSON.stringify({ submitted_ids: ids, resolved_ids: ids.slice(1, 11) }));
    const res = await alight(['eval', 'compare', a, b, '--json']);
    expect(res.code, res.stderr).toBe(0);
    // only A: i0; only B: i2..i10 (9): p = 2 · P[X ≤ 1 | n = 10] = 2 · 11/1024
    expect(JSON.parse(res.stdout)).toMatchObject({
      common: 12,
      bothResolved: 1,
      onlyA: ['i0'],
      neither: 1,
      pValue: 22 / 1024,
    });
  });

  it('removes binary hunks (flagged), and kills a test ' +
    'command that never ends (an error, the run goes on)', async () => {
    const binary =
      'diff --git a/logo.png b/logo.png\nnew file mode 100644\n' +
      'GIT binary patch\nliteral 4\nLcmZ?wbhEHbJ$nG\n\nliteral 0\nHcmV?d00001\n\n';
    const { report } = await grade(binary + fx.instance.patch);
    expect(report.guard).toEqual([{ file: 'logo.png', reason: 'binary hunk', removed: true }]);
    expect(report.status).toBe('resolved'); // the text part is the fix
    const hanging = join(root, 'hanging.jsonl');
    writeFileSync(hanging, `${JSON.stringify({ ...fx.instance, test_cmd: 'sleep 600; true' })}\n`);
    const preds = join(root, 'hang-preds.jsonl');
    writeFileSync(
      preds,
      `${JSON.stringify({ instance_id: fx.instance.instance_id, model_patch: fx.instance.patch })}\n`,
    );
    const res = await alight([
      'eval',
      'grade',
      '--predictions',
      preds,
      '--tasks',
      hanging,
      '--repos',
      fx.repos,
      '--out',
      join(root, 'hang'),
      '--timeout',
      '2',
      '--json',
    ]);
    expect(JSON.parse(res.stdout)).toMatchObject({ error_ids: [fx.instance.instance_id] });
    expect(
      JSON.parse(readFileSync(join(root, 'hang', fx.instance.instance_id, 'report.json'), 'utf8'))[
        fx.instance.instance_id
      ].error,
    ).toBe('tests timed out');
    // The tests outlast the CLI helper's 60 s bound: the grade ending within it at all is the 2 s timeout's kill.
  }, 300_000);

  it('grades in a podman container built here from a ' +
    'debootstrap rootfs (network off), with the same verdicts', async () => {
    const gold = await grade(fx.instance.patch, ['--grader', 'podman']);
    expect(gold.report.status, JSON.stringify(gold.report)).toBe('resolved');
    expect(readFileSync(join(gold.out, fx.instance.instance_id, 'test_output.txt'), 'utf8')).toMatch(
      /PASSED tests\/test_calc.py::test_add/,
    );
    expect((await grade(fx.predictions.wrong.patch, ['--grader', 'podman'])).report.status).toBe('unresolved');
    // Its containers' processes are bounded by their pids cgroup (as root, --ulimit nproc bounds nothing: 2048 here).
    const pidsMax = execFileSync(
      'podman',
      ['run', '--rm', ...runtimes.podman.runFlags, defaultImage, 'sh', '-c', pidsMaxFile],
      { encoding: 'utf8' },
    );
    expect(pidsMax.trim()).toBe(String(containerPids));
  }, 600_000);

  it('runs the tests with the python3 resolved outside the tree: a .python-version of the prediction chooses none', async () => {
    // pyenv's shim, first on PATH here, reads .python-version from the folder it runs in: a version that does not exist
    // fails every python3 run from the tree.
    const shims = join(execFileSync('pyenv', ['root'], { encoding: 'utf8' }).trim(), 'shims');
    const pinned = `${fx.instance.patch}--- /dev/null\n+++ b/.python-version\n@@ -0,0 +1 @@\n+alight-no-such-version\n`;
    const { report } = await grade(pinned, [], fx.instance.instance_id, { PATH: `${shims}:${process.env.PATH}` });
    expect(report.status, JSON.stringify(report)).toBe('resolved');
  }, 120_000);

  it('reports an unknown instance id and a missing repository per instance, with the reason', async () => {
    const unknown = await grade(fx.instance.patch, [], 'acme__calc-404');
    expect(unknown.report).toMatchObject({ status: 'error', error: 'unknown instance id (not in the tasks)' });
    const missing = await grade(fx.instance.patch, ['--repos', join(root, 'nowhere')]);
    expect(missing.report.error).toMatch(/repository acme\/calc is not in .*nowhere/);
  }, 60_000);
});
