import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runtimes } from '../../src/eval/grade/container.js';
import { freshWorkspace, repoSource } from '../../src/eval/grade/workspace.js';
import { alight } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { type Probe, probePatch, probeSaid } from '../helpers/host-probe.js';
import { fixtureImage } from '../helpers/instance-image.js';
import { makeSweRepo } from '../helpers/swe-repo.js';

// Nothing of the grading host reaches the code under test (issue 52): a prediction that fixes the bug and searches
// everything it can see (host-probe.ts) is graded with secrets in the grader's environment, a HOME with a secret in it,
// --repos inside and outside the temp folder (a clone, and a bundle that the grader caches under HOME), a project's store
// beside, and later history in the repository (a commit, a tag, a branch, an upstream remote, all packed). It must find
// nothing and be resolved; run unsandboxed, the same probe finds them, so the search is not blind.

const mark = (what: string): string => `${what}-${randomBytes(8).toString('hex')}`;
const markers = {
  env: mark('probe-env'),
  key: mark('sk-probe'),
  home: mark('probe-home'),
  store: mark('probe-store'),
  future: mark('probe-future'),
};
// Outside the temp folder (the sandbox's /tmp is its own, so a secret there would be hidden by accident, not design).
const outside = mkdtempSync('/var/tmp/alight-view-');
afterAll(() => rmSync(outside, { recursive: true, force: true }));

const home = join(outside, 'home');
mkdirSync(join(home, '.config'), { recursive: true });
writeFileSync(join(home, '.config', 'token'), markers.home);
const project = join(outside, 'project');
mkdirSync(join(project, '.alight'), { recursive: true });
writeFileSync(join(project, '.alight', 'alight.db'), markers.store);

const root = tempDir();
const fx = makeSweRepo(root);
const repo = join(fx.repos, 'acme__calc');
const git = (...args: string[]): string => execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', `later ${markers.future}`);
git('tag', 'v-later');
git('branch', 'release');
git('remote', 'add', 'upstream', `https://example.invalid/${markers.future}.git`);
git('gc', '-q');
const bundled = join(outside, 'repos');
mkdirSync(bundled);
git('bundle', 'create', '-q', join(bundled, 'acme__calc.bundle'), '--all');

const probe: Probe = {
  markers: Object.values(markers),
  paths: [home, join(home, '.cache', 'alight', 'bundles'), fx.repos, bundled, project],
};
const patch = probePatch(repo, fx.base, probe, join(root, 'scratch'));
const env = { HOME: home, ALIGHT_PROBE_TOKEN: markers.env, OPENAI_API_KEY: markers.key };

/** What the code under test may find in its environment: the sandbox's own names, the test script's, Python's. */
const allowed = new Set(['PATH', 'HOME', 'TMPDIR', 'LANG', 'PWD', 'SHLVL', '_', 'OLDPWD']);
allowed.add('PYTEST_DISABLE_PLUGIN_AUTOLOAD').add('ALIGHT_RESULTS').add('PYTHONPATH').add('PYTEST_ADDOPTS');
allowed.add('PYTEST_VERSION');

let n = 0;
/** `alight eval grade` of the probe with `flags`; its report and what the probe said. */
async function grade(flags: string[], row: Record<string, unknown> = {}) {
  const out = join(root, `out-${++n}`);
  const id = `acme__calc-${n}`;
  const preds = join(root, `preds-${n}.jsonl`);
  writeFileSync(preds, JSON.stringify({ model_name_or_path: 't', instance_id: id, model_patch: patch }));
  const tasks = join(root, `tasks-${n}.jsonl`);
  writeFileSync(tasks, JSON.stringify({ ...fx.instance, ...row, instance_id: id }));
  const res = await alight(
    ['eval', 'grade', '--predictions', preds, '--tasks', tasks, '--out', out, '--json', ...flags],
    {
      cwd: project,
      env,
      timeoutMs: 600_000,
    },
  );
  expect(res.code, res.stderr).toBe(0);
  const report = JSON.parse(readFileSync(join(out, id, 'report.json'), 'utf8'))[id];
  // A grade that ends before its tests ran writes no log: say why (the report's error), not that the file is missing.
  const logFile = join(out, id, 'test_output.txt');
  expect(existsSync(logFile), `no test log (${report.status}: ${report.error})`).toBe(true);
  const log = readFileSync(logFile, 'utf8');
  for (const secret of [markers.env, markers.key]) expect(log).not.toContain(secret);
  return { report, log, said: probeSaid(log) };
}

/** A sandboxed grade: the probe searched (a whole system's files) and found nothing; the fix resolved. */
function sawNothing({ report, log, said }: Awaited<ReturnType<typeof grade>>, own: string[] = []): void {
  expect(said, log.slice(-3000)).toMatchObject({ files: expect.any(Number) });
  const searched = said as { files: number; env: string[] };
  expect(searched.files).toBeGreaterThan(1000);
  expect(searched.env.filter((name) => !allowed.has(name) && !own.includes(name))).toEqual([]);
  expect(report.status, report.error).toBe('resolved');
}

describe('what the code under test can see of the grading host', () => {
  it('the local grader, --repos in the temp folder: no secret, no HOME, no repos, no store, no later history', async () => {
    sawNothing(await grade(['--repos', fx.repos]));
  }, 600_000);

  it('the local grader, --repos outside it as a bundle (cached under HOME): the same', async () => {
    sawNothing(await grade(['--repos', bundled]));
  }, 600_000);

  it('unsandboxed (--no-sandbox), the same probe finds the secrets and the paths: the search is not blind', async () => {
    const { said } = await grade(['--repos', fx.repos, '--no-sandbox']);
    expect(said).toMatchObject({ found: expect.stringContaining('env ALIGHT_PROBE_TOKEN') });
    const found = (said as { found: string }).found;
    expect(found).toContain('env OPENAI_API_KEY');
    expect(found).toContain(home);
    expect(found).toContain(fx.repos);
  }, 600_000);

  it('the podman grader with --repos: the same', async () => {
    // podman's own (HOSTNAME, TERM, container) and the image's locale, none of them the grader's.
    sawNothing(await grade(['--repos', fx.repos, '--grader', 'podman']), ['HOSTNAME', 'TERM', 'container', 'LC_CTYPE']);
  }, 600_000);

  it('the podman grader in the instance image, whose /testbed/.git holds the later history: the same', async () => {
    const image = fixtureImage(fx, 'host_view');
    try {
      const log = ['run', '--rm', ...runtimes.podman.runFlags, image, 'git', '-C', '/testbed', 'log', '--all'];
      const inImage = execFileSync('podman', log, { encoding: 'utf8' });
      expect(inImage).toContain(markers.future); // the image itself holds it, as one cloned from upstream would
      const own = ['HOSTNAME', 'TERM', 'container', 'LC_CTYPE'];
      sawNothing(await grade(['--grader', 'podman'], { image }), own);
    } finally {
      execFileSync('podman', ['rmi', '-f', image], { stdio: 'ignore' });
    }
  }, 600_000);

  it("an agent's workspace holds the base commit alone: no later commit, ref, remote, reflog or object", () => {
    {
      const ws = join(tempDir(), 'ws');
      freshWorkspace(repoSource(fx.repos, 'acme/calc'), fx.base, ws);
      const inWs = (...args: string[]) => execFileSync('git', args, { cwd: ws, encoding: 'utf8' });
      expect(inWs('rev-list', '--all', '--reflog').trim().split('\n')).toHaveLength(1);
      expect(inWs('for-each-ref', '--format=%(refname)').trim().split('\n')).toHaveLength(1);
      expect(inWs('remote').trim()).toBe('');
      const objects = inWs('cat-file', '--batch-all-objects', '--batch');
      expect(objects).not.toContain(markers.future);
      expect(objects).toContain('return a - b'); // the base's tree is there
      expect(objects).not.toContain('return a + b'); // the fix, committed later, is not
    }
  });
});
