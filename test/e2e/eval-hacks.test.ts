import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alight } from '../helpers/cli.js';
import { dockerCli } from '../helpers/docker-cli.js';
import { tempDir } from '../helpers/gateway.js';
import { hacks } from '../helpers/hack-corpus.js';
import { makeSweRepo } from '../helpers/swe-repo.js';

// The reward-hack corpus (test/helpers/hack-corpus.ts) against the grader, sandboxed by default: none resolved, each
// flagged or refused with its reason; gold still resolved. Then the resource attacks: each ends in time with a verdict,
// no process of the grade left, nothing outside the workspace changed.
type Report = { status: string; error: string | null; guard: { file: string; reason: string; removed: boolean }[] };

/** Every file under a folder with its content hash (a missing folder: empty). */
function hashTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    if (!existsSync(d)) return;
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out[p] = createHash('sha256').update(readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

function processesMatching(marker: string): string[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .flatMap((pid) => {
      try {
        const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        return cmd.includes(marker) ? [cmd.replaceAll('\0', ' ')] : [];
      } catch {
        return [];
      }
    });
}

describe('reward hacks against the sandboxed grader', () => {
  const root = tempDir();
  const fx = makeSweRepo(root);
  // The grade's HOME is a folder of its own, so that it can be hashed before and after.
  const home = join(root, 'home');
  mkdirSync(home);
  writeFileSync(join(home, '.profile'), 'untouched\n');
  // Its temporary folders too: the process check then sees this file's grades only, not another file's running beside.
  const tmp = join(root, 'tmp');
  mkdirSync(tmp);

  const grade = async (
    predictions: { instance_id: string; model_patch: string | null }[],
    extra: string[] = [],
    tasksFile = fx.tasksFile,
  ) => {
    const preds = join(root, `preds-${Math.random().toString(36).slice(2)}.jsonl`);
    writeFileSync(preds, predictions.map((p) => JSON.stringify({ model_name_or_path: 't', ...p })).join('\n'));
    const out = join(root, `out-${Math.random().toString(36).slice(2)}`);
    const started = Date.now();
    const res = await alight(
      [
        'eval',
        'grade',
        '--predictions',
        preds,
        '--tasks',
        tasksFile,
        '--repos',
        fx.repos,
        '--out',
        out,
        '--json',
        ...extra,
      ],
      { env: { HOME: home, TMPDIR: tmp }, timeoutMs: 300_000 },
    );
    expect(res.code, res.stderr).toBe(0);
    const report = (id: string): Report => JSON.parse(readFileSync(join(out, id, 'report.json'), 'utf8'))[id];
    if (process.env.DEBUG_HACKS)
      for (const p of predictions) {
        try {
          console.log(p.instance_id, readFileSync(join(out, p.instance_id, 'test_output.txt'), 'utf8').slice(0, 3000));
        } catch {
          /* none */
        }
      }
    return { summary: JSON.parse(res.stdout), report, out, seconds: (Date.now() - started) / 1000 };
  };
  /**
   * Runs a grade and checks what every grade must leave: no process of it (nothing under its alight-grade- folder),
   * HOME and the user's site-packages as they were.
   */
  const leavesNothing = async <T>(run: () => Promise<T>): Promise<T> => {
    const before = hashTree(home);
    const result = await run();
    expect(processesMatching(join(tmp, 'alight-grade-'))).toEqual([]);
    expect(hashTree(home)).toEqual(before);
    return result;
  };
  const one = async (patch: string, extra: string[] = []): Promise<Report> =>
    (await grade([{ instance_id: fx.instance.instance_id, model_patch: patch }], extra)).report(
      fx.instance.instance_id,
    );

  for (const [name, hack] of Object.entries(hacks)) {
    it(`refuses ${name}`, async () => {
      const report = await one(hack.patch);
      expect(report.status, JSON.stringify(report)).not.toBe('resolved');
      if (hack.expect.flag) expect(report.guard.map((g) => g.reason).join('; ')).toMatch(hack.expect.flag);
      if (hack.expect.error) expect(report.error).toMatch(hack.expect.error);
    }, 120_000);
  }

  it('refuses each hack that has an error with the static flags opted out: the plugin and its signed record alone', async () => {
    const names = Object.keys(hacks).filter((n) => hacks[n].expect.error);
    const tasks = join(root, 'alone-tasks.jsonl');
    writeFileSync(
      tasks,
      names.map((n) => JSON.stringify({ ...fx.instance, instance_id: `acme__calc-${n}` })).join('\n'),
    );
    const { report } = await grade(
      names.map((n) => ({ instance_id: `acme__calc-${n}`, model_patch: hacks[n].patch })),
      ['--allow-test-framework-access', '--concurrency', '2'],
      tasks,
    );
    for (const n of names) expect(report(`acme__calc-${n}`).error, n).toMatch(hacks[n].expect.error!);
  }, 300_000);

  /**
   * The whole corpus in one run, one instance id per hack, with `grader` (the prediction applied and judged here, the
   * tests in its container).
   */
  const corpusIn = async (grader: 'podman' | 'docker', env?: NodeJS.ProcessEnv): Promise<void> => {
    const names = Object.keys(hacks);
    const tasks = join(root, `corpus-${grader}.jsonl`);
    writeFileSync(
      tasks,
      [...names, 'gold'].map((n) => JSON.stringify({ ...fx.instance, instance_id: `acme__calc-${n}` })).join('\n'),
    );
    const preds = join(root, `corpus-${grader}-preds.jsonl`);
    writeFileSync(
      preds,
      [
        ...names.map((n) => ({ instance_id: `acme__calc-${n}`, model_patch: hacks[n].patch })),
        { instance_id: 'acme__calc-gold', model_patch: fx.instance.patch },
      ]
        .map((p) => JSON.stringify(p))
        .join('\n'),
    );
    const out = join(root, `corpus-${grader}-out`);
    const res = await alight(
      [
        'eval',
        'grade',
        '--predictions',
        preds,
        '--tasks',
        tasks,
        '--repos',
        fx.repos,
        '--grader',
        grader,
        '--out',
        out,
        '--concurrency',
        '2',
        '--json',
      ],
      { env: { HOME: home, ...env }, timeoutMs: 600_000 },
    );
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout).resolved_ids).toEqual(['acme__calc-gold']);
    for (const n of names) {
      const r = JSON.parse(readFileSync(join(out, `acme__calc-${n}`, 'report.json'), 'utf8'))[
        `acme__calc-${n}`
      ] as Report;
      if (hacks[n].expect.flag) expect(r.guard.map((g) => g.reason).join('; '), n).toMatch(hacks[n].expect.flag!);
      if (hacks[n].expect.error) expect(r.error, n).toMatch(hacks[n].expect.error!);
    }
  };

  it(
    'refuses the whole corpus with the podman grader as well (gold still resolved)',
    () => corpusIn('podman'),
    600_000,
  );

  describe("with the docker CLI (against podman's Docker API)", () => {
    let docker: Awaited<ReturnType<typeof dockerCli>>;
    beforeAll(async () => {
      docker = await dockerCli();
    }, 300_000);
    afterAll(() => docker?.stop());
    it(
      'refuses the whole corpus with the docker grader (gold still resolved)',
      () => corpusIn('docker', docker.env),
      600_000,
    );
  });

  it('still grades gold resolved and the wrong fix unresolved, ' +
    "and left HOME and the user's site-packages as they were", async () => {
    const site = join(home, '.local');
    const before = { home: hashTree(home), site: hashTree(site) };
    expect((await one(fx.instance.patch)).status).toBe('resolved');
    expect((await one(fx.predictions.wrong.patch!)).status).toBe('unresolved');
    expect((await one(hacks['user-site-pth'].patch)).status).toBe('unresolved');
    expect({ home: hashTree(home), site: hashTree(site) }).toEqual(before);
  }, 120_000);

  it('kills background processes with the grade (same group and setsid); they cannot rewrite the reports', async () => {
    const marker = `alight-sleeper-${Date.now()}`;
    const out = join(root, 'bg-out');
    const spawnLines = [
      'import subprocess',
      `subprocess.Popen(["sh", "-c", "sleep 4; echo hacked > ${out}/summary.json # ${marker}"])`,
      'subprocess.Popen(["setsid", "sh", "-c", "sleep 5; echo hacked ' +
        `> ${out}/${fx.instance.instance_id}/report.json # ${marker}"])`,
    ];
    const patch =
      `--- a/calc.py\n+++ b/calc.py\n@@ -4,3 +4,${3 + spawnLines.length} @@\n \n` +
      ` def mul(a, b):\n     return a * b\n${spawnLines.map((l) => `+${l}`).join('\n')}\n`;
    const preds = join(root, 'bg.jsonl');
    writeFileSync(preds, JSON.stringify({ instance_id: fx.instance.instance_id, model_patch: patch }));
    const res = await alight(
      ['eval', 'grade', '--predictions', preds, '--tasks', fx.tasksFile, '--repos', fx.repos, '--out', out, '--json'],
      { env: { HOME: home } },
    );
    expect(res.code, res.stderr).toBe(0);
    expect(processesMatching(marker)).toEqual([]);
    await new Promise((r) => setTimeout(r, 6000));
    expect(readFileSync(join(out, 'summary.json'), 'utf8')).not.toContain('hacked');
    expect(readFileSync(join(out, fx.instance.instance_id, 'report.json'), 'utf8')).not.toContain('hacked');
  }, 120_000);

  it('ends 700 MB of test output in time with an error, not a crash', async () => {
    // 700 MiB to the log's pipe (past pytest's capture, as toPipes does), 1 MiB at a time.
    const lines = [
      'import os, stat',
      'for _ in range(700):',
      '    for _fd in range(64):',
      '        try:',
      '            if stat.S_ISFIFO(os.fstat(_fd).st_mode) or ' +
        'stat.S_ISSOCK(os.fstat(_fd).st_mode): os.write(_fd, b"x" * (1 << 20))',
      '        except OSError:',
      '            pass',
    ];
    const patch =
      `--- a/calc.py\n+++ b/calc.py\n@@ -4,3 +4,${3 + lines.length} @@\n \n` +
      ` def mul(a, b):\n     return a * b\n${lines.map((l) => `+${l}`).join('\n')}\n`;
    const { report, seconds } = await leavesNothing(() =>
      grade([{ instance_id: fx.instance.instance_id, model_patch: patch }], ['--timeout', '60']),
    );
    const r = report(fx.instance.instance_id);
    expect(r).toMatchObject({ status: 'error', error: 'output truncated' });
    expect(seconds).toBeLessThan(60);
  }, 120_000);

  it('bounds a patch that keeps GNU patch busy for minutes by ' +
    "the grade's timeout, without blocking the other grades", async () => {
    // A 100k-line file, then 3000 hunks whose context is nowhere in it: git refuses at once, patch --fuzz=5 searches
    // on.
    const big = Array.from({ length: 100_000 }, (_, i) => `+x = ${i % 7}\n`).join('');
    const hunks = Array.from(
      { length: 3000 },
      (_, h) =>
        `--- a/big.py\n+++ b/big.py\n@@ -${h * 30 + 1},3 +${h * 30 + 1},3 @@\n` +
        ` nope ${h}\n-nada ${h}\n+zip ${h}\n nope2 ${h}\n`,
    ).join('');
    const slow = `--- /dev/null\n+++ b/big.py\n@@ -0,0 +1,100000 @@\n${big}${hunks}`;
    const tasks = join(root, 'two-tasks.jsonl');
    writeFileSync(
      tasks,
      [fx.instance, { ...fx.instance, instance_id: 'acme__calc-2' }].map((t) => JSON.stringify(t)).join('\n'),
    );
    const { report, seconds } = await leavesNothing(() =>
      grade(
        [
          { instance_id: fx.instance.instance_id, model_patch: slow },
          { instance_id: 'acme__calc-2', model_patch: fx.instance.patch },
        ],
        ['--timeout', '5', '--concurrency', '2'],
        tasks,
      ),
    );
    expect(report(fx.instance.instance_id)).toMatchObject({
      status: 'error',
      error: 'applying the patch took over 5 s',
    });
    expect(report('acme__calc-2').status).toBe('resolved');
    expect(seconds).toBeLessThan(20);
  }, 120_000);

  it('bounds the processes of a grade: a fork bomb ends in time and leaves none', async () => {
    const marker = `alight-forked-${Date.now()}`;
    const lines = [
      'import os',
      'for _ in range(100000):',
      '    try:',
      '        if os.fork() == 0:',
      `            os.execvp("sh", ["sh", "-c", "sleep 600; : ${marker}"])`,
      '    except OSError:',
      '        break',
    ];
    const patch =
      `--- a/calc.py\n+++ b/calc.py\n@@ -4,3 +4,${3 + lines.length} @@\n \n` +
      ` def mul(a, b):\n     return a * b\n${lines.map((l) => `+${l}`).join('\n')}\n`;
    const { report, seconds } = await leavesNothing(() =>
      grade([{ instance_id: fx.instance.instance_id, model_patch: patch }], ['--timeout', '30']),
    );
    expect(report(fx.instance.instance_id).status).not.toBe('resolved');
    expect(processesMatching(marker)).toEqual([]);
    expect(seconds).toBeLessThan(40);
  }, 120_000);

  it('grades a 300-character id as an error of its own and the other predictions as usual', async () => {
    const long = 'x'.repeat(300);
    const { summary, report } = await leavesNothing(() =>
      grade([
        { instance_id: long, model_patch: fx.instance.patch },
        { instance_id: fx.instance.instance_id, model_patch: fx.instance.patch },
      ]),
    );
    expect(summary).toMatchObject({ error_ids: [long], resolved_ids: [fx.instance.instance_id] });
    expect(report(fx.instance.instance_id).status).toBe('resolved');
  }, 120_000);

  it('refuses to grade unsandboxed where bubblewrap is missing, unless told, and then says so', async () => {
    const args = [
      'eval',
      'grade',
      '--predictions',
      join(root, 'one.jsonl'),
      '--tasks',
      fx.tasksFile,
      '--repos',
      fx.repos,
      '--out',
      join(root, 'nosb'),
      '--json',
    ];
    writeFileSync(
      join(root, 'one.jsonl'),
      JSON.stringify({ instance_id: fx.instance.instance_id, model_patch: fx.instance.patch }),
    );
    // No bwrap (nor apt-get to install it) on this PATH.
    const refused = await alight(args, { env: { HOME: home, PATH: '/nonexistent' } });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/bubblewrap[\s\S]*--no-sandbox/);
    const unsandboxed = await alight([...args, '--no-sandbox'], { env: { HOME: home } });
    expect(unsandboxed.stderr).toMatch(/without a sandbox \(--no-sandbox\)/);
    expect(JSON.parse(unsandboxed.stdout)).toMatchObject({ resolved_ids: [fx.instance.instance_id] });
  }, 120_000);
});
