import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errorMessage } from '../../errors.js';
import { probe } from '../../process/launch.js';
import { applyAndJudge, applyFailed, applyTestPatch, frameworkAccessReason } from './apply-judge.js';
import type { GradeOptions, GradeTask, InstanceReport, Ran, Tested, TestSite } from './grade-types.js';
import { markers, resolution, statusesFromLog, testsReport } from './grading.js';
import { fileSections, guardPatch, protectedReason } from './guards.js';
import { testInImage } from './image-site.js';
import { testPython, testRuntime } from './interpreter.js';
import { parserForRepo, parsers } from './log-parsers.js';
import { unbackedResults, untrustedPytestLog } from './log-trust.js';
import { monitorFlags, monitorReason } from './monitor.js';
import { privateGitDir } from './patch-apply.js';
import { prepareResults, readResults, resultsEnv, tamperedRun } from './pytest-results.js';
import { runScript } from './run-script.js';
import { shellQuote } from './specs.js';
import { fileAt, freshWorkspace, gitEnvFor, repoSource } from './workspace.js';
import { testSources, undeclaredXfails, xfailSources } from './xfail-sources.js';

const defaultMaxOutput = 64 << 20;

const defaultTestCmd = 'python3 -m pytest -rA --tb=no -p no:cacheprovider';

/**
 * Grades one prediction as the official harness does: a fresh tree at the base commit (never the agent's), the
 * prediction applied the official ways in order (git apply, git apply --reject, patch --fuzz=5), the files the test
 * patch touches reset, the test patch applied, the test command run between markers with its exit status recorded,
 * the log parsed with the repo's parser and judged by SWE-bench's rule. Protected files are guarded first.
 */
export async function gradeInstance(
  task: GradeTask,
  prediction: string | null,
  o: GradeOptions,
): Promise<InstanceReport> {
  const report = ungraded(task.instance_id, prediction);
  if (!report.patch_exists && !o.testEmpty) return { ...report, status: 'empty_patch' };
  const guarded = guardPatch(prediction ?? '', o.allowTestEdits);
  report.guard = guarded.flags;
  // The monitor reads the diff alone: it judges every grader's predictions alike, before anything runs.
  const watched = monitorFlags(guarded.patch, task.test_patch);
  const dir = mkdtempSync(join(tmpdir(), 'alight-grade-'));
  try {
    writeFileSync(join(dir, 'pred.diff'), guarded.patch);
    const slipped = o.allowTestEdits ? null : slippedPastGuard(dir, join(dir, 'pred.diff'));
    if (slipped) return { ...report, error: slipped };
    const started = performance.now();
    const ran =
      o.site.kind === 'image'
        ? await testInImage(
            task,
            dir,
            guarded.patch.trim() !== '',
            { ...o, maxOutputBytes: o.maxOutputBytes ?? defaultMaxOutput },
            o.site.open,
          )
        : await testOnHost(task, dir, guarded.patch.trim() !== '', o.site, o);
    if ('error' in ran) return { ...report, error: ran.error };
    // The tree judge's flags, but one per file: a path the diff guard already flagged keeps that flag.
    const judged = (ran.flags ?? []).filter((f) => !report.guard.some((g) => g.file === f.file));
    report.guard = [...report.guard, ...judged, ...watched];
    report.test_seconds = (performance.now() - started) / 1000;
    writeFileSync(o.logFile, ran.log);
    return judgeLog(task, report, ran, o);
  } catch (err) {
    return { ...report, error: errorMessage(err) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The verdict from the test log, once it is trusted; non-test code reaching into the test framework is not resolved.
 */
function judgeLog(
  task: GradeTask,
  report: InstanceReport,
  { log, results, xfails }: Tested,
  o: GradeOptions,
): InstanceReport {
  if (log.includes(applyFailed)) return { ...report, error: 'patch apply failed' };
  report.patch_successfully_applied = true;
  const parser = task.log_parser ?? parserForRepo(task.repo);
  const tampered = tamperedRun(results);
  if (tampered) return { ...report, error: tampered };
  const parsed = statusesFromLog(log, parsers[parser]);
  if ('invalid' in parsed) return { ...report, error: parsed.invalid };
  const conflict = conflictingResults(log, [...task.FAIL_TO_PASS, ...task.PASS_TO_PASS]);
  if (conflict)
    return {
      ...report,
      error:
        `${conflict} is reported both passing and failing: the ` +
        'log is not trusted (output from the code under test?)',
    };
  const untrusted = untrustedPytestLog(log, parser) ?? unbackedResults(parsed.map, results, parser);
  if (untrusted) return { ...report, error: untrusted };
  // SWE-bench counts any XFAIL as a pass: --allow-test-framework-access grades as it does.
  const judged =
    xfails && !o.allowFrameworkAccess
      ? undeclaredXfails(parsed.map, () => xfailSources(xfails, testPython()))
      : { map: parsed.map, flags: [] };
  report.guard = [...report.guard, ...judged.flags];
  const tests = testsReport(judged.map, task.FAIL_TO_PASS, task.PASS_TO_PASS);
  const refusedBy = [frameworkAccessReason, monitorReason];
  const reaches = report.guard.some((g) => refusedBy.some((r) => g.reason.startsWith(r))) && !o.allowFrameworkAccess;
  const resolved = resolution(tests) === 'RESOLVED_FULL' && !reaches;
  return { ...report, tests_status: tests, resolved, status: resolved ? 'resolved' : 'unresolved' };
}

/** A prediction's report before it is graded: an error until shown otherwise. */
export function ungraded(instanceId: string, prediction: string | null, error: string | null = null): InstanceReport {
  return {
    instance_id: instanceId,
    status: 'error',
    patch_is_None: prediction === null,
    patch_exists: Boolean(prediction?.trim()),
    patch_successfully_applied: false,
    resolved: false,
    tests_status: null,
    error,
    guard: [],
    test_seconds: null,
  };
}

/**
 * git's own reading of a guarded patch, against the guard's: why it fails the grade if a protected path slipped past.
 */
export function slippedPastGuard(dir: string, diff: string): string | null {
  const slipped = patchPaths(dir, diff).filter((p) => protectedReason(p) !== null);
  return slipped.length ? `the patch touches ${slipped.join(', ')} in a form the guard could not separate` : null;
}

/**
 * A workspace from --repos, the prediction applied and judged (apply-judge.ts); the test patch; the tests here
 * (sandboxed unless opted out) or in the image named.
 */
async function testOnHost(
  task: GradeTask,
  dir: string,
  hasPatch: boolean,
  site: Exclude<TestSite, { kind: 'image' }>,
  o: GradeOptions,
): Promise<Ran> {
  const source = repoSource(site.reposDir, task.repo);
  const ws = join(dir, 'ws');
  freshWorkspace(source, task.base_commit, ws, false);
  const sections = fileSections(task.test_patch);
  const testFiles = sections.flatMap((s) => s.paths);
  const base = (file: string): string | undefined => fileAt(source, task.base_commit, file);
  const reset = (): void => {
    rmSync(ws, { recursive: true, force: true });
    freshWorkspace(source, task.base_commit, ws, false);
  };
  const tree = { ws, gitDir: privateGitDir(join(dir, 'git')) };
  const prepared = await applyAndJudge(tree, hasPatch ? join(dir, 'pred.diff') : null, o, { base, reset, testFiles });
  if (!('flags' in prepared)) return prepared;
  const tested = await applyTestPatch(tree, dir, task.test_patch, base, o.timeoutMs);
  if (tested) return tested;
  const directives = sections
    .map((s) => s.file)
    .filter((f) => f.endsWith('.py'))
    .map(shellQuote)
    .join(' ');
  // Read before the tests run: during the run the test files are in the writable workspace.
  const xfails = testSources(ws, testFiles);
  const results = join(dir, 'results');
  mkdirSync(results);
  const key = prepareResults(results);
  const container =
    site.kind === 'mounted'
      ? { runtime: site.runtime, image: site.image, mounts: [`${ws}:/testbed`, `${results}:/alight/results`] }
      : undefined;
  const python = container ? null : (testRuntime()?.bin ?? null);
  const script =
    'export PYTEST_DISABLE_PLUGIN_AUTOLOAD=1\n' +
    (python ? `export PATH=${shellQuote(python)}:"$PATH"\n` : '') +
    `${resultsEnv(container ? '/alight/results' : results)}set -x\n: '${markers.start}'\n` +
    `${task.test_cmd ?? defaultTestCmd} ${directives}\ncode=$?\n: '${markers.end}'\nexit $code\n`;
  const sandbox = site.kind === 'host' && site.sandbox ? { ...site.sandbox, workspace: ws, results } : undefined;
  const log = await runScript(ws, script, {
    timeoutMs: o.timeoutMs,
    container,
    sandbox,
    maxOutputBytes: o.maxOutputBytes ?? defaultMaxOutput,
  });
  return { log, flags: prepared.flags, results: readResults(results, key), xfails };
}

/** The paths git reads in a patch (both sides of renames and copies), read in `dir` (alight's, without a .git). */
function patchPaths(dir: string, diff: string): string[] {
  const res = probe('git', ['apply', '--numstat', '-z', diff], { cwd: dir, env: gitEnvFor(dir) });
  return res.exitCode === 0
    ? res.stdout
        .split('\0')
        .map((f) => f.replace(/^\d+\t\d+\t|^-\t-\t/, ''))
        .filter(Boolean)
    : [];
}

/**
 * A graded test whose `STATUS name` lines disagree: pytest reports each test once, so the rest was printed by something
 * else.
 */
function conflictingResults(log: string, tests: string[]): string | null {
  const wanted = new Set(tests);
  const seen = new Map<string, Set<string>>();
  for (const m of log.matchAll(/^(PASSED|FAILED|ERROR|SKIPPED|XFAIL) (\S+)/gm)) {
    if (!wanted.has(m[2])) continue;
    const statuses = seen.get(m[2]) ?? new Set();
    statuses.add(m[1] === 'XFAIL' ? 'PASSED' : m[1]);
    seen.set(m[2], statuses);
  }
  return [...seen].find(([, statuses]) => statuses.size > 1)?.[0] ?? null;
}
