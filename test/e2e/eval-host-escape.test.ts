import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { applyAndJudge } from '../../src/eval/grade/apply-judge.js';
import { gitMetadata } from '../../src/eval/grade/guards.js';
import { headFile, onTree, privateGitDir, resetToHead } from '../../src/eval/grade/patch-apply.js';
import { freshWorkspace, repoSource } from '../../src/eval/grade/workspace.js';
import { alight } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { type Escape, escapedName, failingHunk, gitFilterPatch, wrongFix } from '../helpers/host-escape.js';
import { fixtureImage } from '../helpers/instance-image.js';
import { processMark } from '../helpers/processes.js';
import { makeSweRepo } from '../helpers/swe-repo.js';

// A prediction that plants a git repository in the judged tree (host-escape.ts) must run nothing on the grading host:
// no file outside the sandbox, no process after the grade, no verdict of the run changed. First each layer on its own
// (the guard aside), then whole runs of `alight eval grade` on the local grader, podman with --repos and the instance
// image.
describe('a prediction cannot run commands on the grading host', () => {
  const root = tempDir();
  const fx = makeSweRepo(root);
  const outside = join(root, 'outside');
  mkdirSync(outside);
  let n = 0;
  const attack = (): Escape => {
    n++;
    return { inTree: `PWNED-${n}`, outside: join(outside, `PWNED-${n}`), marker: `alight-escape-${process.pid}-${n}` };
  };
  const testPatch = join(root, 'test.diff');
  writeFileSync(testPatch, fx.instance.test_patch);

  /** A workspace at the base with the attack's repository planted in it, as GNU patch leaves it. */
  const planted = (e: Escape, name: string): string => {
    const ws = join(root, name);
    freshWorkspace(repoSource(fx.repos, 'acme/calc'), fx.base, ws, false);
    writeFileSync(join(root, `${name}.diff`), gitFilterPatch(e, join(root, 'no-out')));
    execFileSync('patch', ['--batch', '-p1', '-i', join(root, `${name}.diff`)], { cwd: ws, stdio: 'ignore' });
    expect(existsSync(join(ws, '.git', 'config'))).toBe(true);
    return ws;
  };

  it("applies the test patch in a planted tree without running the tree's filter", async () => {
    const e = attack();
    const ws = planted(e, 'planted-test-patch');
    const tree = { ws, gitDir: privateGitDir(join(root, 'planted-test-patch.git')) };
    const r = await onTree(tree, 'git', ['apply', '-v', testPatch], { reads: [testPatch], timeoutMs: 60_000 });
    expect(r.ok, r.said).toBe(true);
    expect(readFileSync(join(ws, 'tests', 'test_calc.py'), 'utf8')).toContain('def test_add');
    expect([existsSync(join(ws, e.inTree)), existsSync(e.outside)]).toEqual([false, false]);
  });

  it("resets and reads an image's tree through its history moved out, never the planted one", () => {
    const e = attack();
    const ws = join(root, 'image-tree');
    execFileSync('git', ['clone', '-q', join(fx.repos, 'acme__calc'), ws]);
    execFileSync('git', ['checkout', '-q', fx.base], { cwd: ws });
    const tree = { ws, gitDir: join(root, 'image-tree.git') };
    renameSync(join(ws, '.git'), tree.gitDir);
    writeFileSync(join(root, 'image.diff'), gitFilterPatch(e, join(root, 'no-out'), undefined, wrongFix));
    execFileSync('patch', ['--batch', '-p1', '-i', join(root, 'image.diff')], { cwd: ws, stdio: 'ignore' });
    expect(headFile(tree, 'calc.py')).toContain('return a - b');
    resetToHead(tree);
    expect(readFileSync(join(ws, 'calc.py'), 'utf8')).toContain('return a - b');
    expect(existsSync(join(ws, '.git'))).toBe(false);
    expect([existsSync(join(ws, e.inTree)), existsSync(e.outside)]).toEqual([false, false]);
  });

  it('runs the apply chain on the unguarded attack without running it, then reverts and flags the repository', async () => {
    for (const [name, tail] of [
      ['applies', wrongFix],
      ['fails', failingHunk],
    ]) {
      const e = attack();
      const mark = processMark();
      Object.assign(process.env, mark.env);
      const ws = join(root, `chain-${name}`);
      const source = repoSource(fx.repos, 'acme/calc');
      const reset = (): void => freshWorkspace(source, fx.base, ws, false);
      reset();
      const diff = join(root, `chain-${name}.diff`);
      writeFileSync(diff, gitFilterPatch(e, join(root, 'no-out'), escapedName, tail));
      const tree = { ws, gitDir: privateGitDir(join(root, `chain-${name}.git`)) };
      const result = await applyAndJudge(
        tree,
        diff,
        { timeoutMs: 60_000, allowTestEdits: true },
        { base: () => undefined, reset, testFiles: [] },
      );
      delete process.env.ALIGHT_TEST_MARK;
      if (name === 'applies') {
        expect('flags' in result && result.flags.filter((f) => f.reason === gitMetadata)).toEqual([
          { file: '.git', reason: gitMetadata, removed: true },
          { file: '.gitattributes', reason: gitMetadata, removed: true },
        ]);
        expect(existsSync(join(ws, '.git'))).toBe(false);
      } else expect(result).toEqual({ log: '>>>>> Patch Apply Failed\n' });
      expect([existsSync(join(ws, e.inTree)), existsSync(e.outside)]).toEqual([false, false]);
      expect(await mark.left()).toEqual([]);
    }
  });

  /**
   * A run of `alight eval grade` with an honest wrong fix first and the attack in both spellings after: nothing outside,
   * no process left, and the wrong fix's verdict as it was a few seconds after the run.
   */
  const gradeRun = async (label: string, extra: string[], rows: Record<string, unknown> = {}) => {
    const out = join(root, `out-${label}`);
    const attacks = { plain: attack(), escaped: attack() };
    const predictions = [
      { instance_id: 'acme__calc-1', model_patch: wrongFix },
      { instance_id: 'acme__calc-2', model_patch: gitFilterPatch(attacks.plain, out, undefined, wrongFix) },
      { instance_id: 'acme__calc-3', model_patch: gitFilterPatch(attacks.escaped, out, escapedName, failingHunk) },
    ];
    const preds = join(root, `preds-${label}.jsonl`);
    writeFileSync(preds, predictions.map((p) => JSON.stringify({ model_name_or_path: 't', ...p })).join('\n'));
    const tasks = join(root, `tasks-${label}.jsonl`);
    writeFileSync(
      tasks,
      predictions.map((p) => JSON.stringify({ ...fx.instance, ...rows, instance_id: p.instance_id })).join('\n'),
    );
    const mark = processMark();
    const res = await alight(
      ['eval', 'grade', '--predictions', preds, '--tasks', tasks, '--out', out, '--json', ...extra],
      { env: mark.env, timeoutMs: 600_000 },
    );
    expect(res.code, res.stderr).toBe(0);
    const verdicts = (): string[] =>
      predictions.map((p) => JSON.parse(readFileSync(join(out, p.instance_id, 'report.json'), 'utf8'))[p.instance_id]);
    const after = JSON.stringify(verdicts());
    expect(await mark.left()).toEqual([]);
    // The attack's rewrite came ~0.1 s after the grader exited: a few seconds is far past it.
    await new Promise((r) => setTimeout(r, 3000));
    expect(JSON.stringify(verdicts())).toBe(after);
    expect(verdicts().map((v) => (v as unknown as { status: string }).status)).toEqual([
      'unresolved',
      'unresolved',
      'error',
    ]);
    for (const e of Object.values(attacks)) expect(existsSync(e.outside), e.outside).toBe(false);
    return verdicts() as unknown as { guard: { reason: string }[]; error: string | null }[];
  };

  it('runs nothing on the host with the local grader (bubblewrap)', async () => {
    const [, plain, escaped] = await gradeRun('local', ['--repos', fx.repos, '--concurrency', '2']);
    expect(plain.guard.map((g) => g.reason)).toContain(gitMetadata);
    expect(escaped.guard.map((g) => g.reason)).toContain(gitMetadata);
  }, 300_000);

  it('runs nothing on the host with the podman grader and --repos', async () => {
    await gradeRun('podman', ['--repos', fx.repos, '--grader', 'podman']);
  }, 600_000);

  describe('in the instance image', () => {
    const image = fixtureImage(fx, 'acme_calc_escape');
    afterAll(() => {
      execFileSync('podman', ['rmi', '-f', image], { stdio: 'ignore' });
    });
    it('runs nothing on the host with the instance-image grader', async () => {
      await gradeRun('image', ['--grader', 'podman'], { image });
    }, 600_000);
  });
});
