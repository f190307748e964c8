import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { loadConfig, withOverrides } from '../src/config/load.js';
import { configSchema, type K8sConfig } from '../src/config/schema.js';
import { keptAsTasks } from '../src/data/pipeline.js';
import { readAllRows } from '../src/data/read.js';
import { AlightError, ExitCode } from '../src/errors.js';
import { gradeInstance } from '../src/eval/grade/grader.js';
import { workspaceDiff } from '../src/eval/grade/workspace.js';
import { withGrader } from '../src/eval/graders/index.js';
import { hostSandbox } from '../src/eval/graders/local.js';
import { compareRuns } from '../src/eval/run/compare.js';
import { gradePredictions } from '../src/eval/run/grade-run.js';
import { gradeTask, readGradeTasks, readPredictions } from '../src/eval/run/inputs.js';
import { storeProbes } from '../src/eval/run/probe.js';
import { type EvalResult, evalSwebench } from '../src/eval/run/swebench-run.js';
import type { Store } from '../src/store/store.js';
import { renderProbe } from '../src/ui/data-measure-report.js';
import { renderCompare, renderEval, renderGrade } from '../src/ui/eval-report.js';
import { plainProgress } from '../src/ui/plain-progress.js';
import { setupProgress } from '../src/ui/setup-progress.js';
import {
  defaultRunName,
  flagOf,
  graderOf,
  gradingAt,
  newSecret,
  notice,
  printJson,
  withInterrupt,
  withRunner,
  withStore,
  withUpstream,
} from './shared.js';
import type { ProbeFlags } from './table/declared-data.js';
import type { CompareFlags, GradeFlags, RewardFlags, SwebenchFlags } from './table/declared-eval.js';

/** `eval grade` reads the config only for `--grader k8s`: the cluster, the namespace, the pods' resources. */
function gradeK8s(flags: GradeFlags, pods: boolean): K8sConfig {
  const given = (['config', 'namespace', 'kubeContext'] as const).find((f) => flags[f] !== undefined);
  if (!pods) {
    if (given) throw new AlightError(`${flagOf(given)} applies only with --grader k8s`, ExitCode.usage);
    return configSchema.parse({}).k8s;
  }
  return withOverrides(loadConfig(flags.config).config, {
    k8s: { namespace: flags.namespace, context: flags.kubeContext },
  }).k8s;
}

/**
 * `alight eval grade`: existing predictions graded by the local grader; official report files; a table or the summary
 * as JSON.
 */
export async function gradeCommand(flags: GradeFlags) {
  // `eval grade` has no --runtime: the Kubernetes grader is only ever asked for by name.
  const k8s = gradeK8s(flags, flags.grader === 'k8s');
  const [tasks, predictions] = await Promise.all([
    readGradeTasks(flags.tasks, flags.imageTemplate),
    readPredictions(flags.predictions),
  ]);
  if (predictions.length === 0) throw new AlightError(`${flags.predictions} has no predictions`, ExitCode.input);
  const out = resolve(flags.out ?? join('.alight', 'eval', `grade-${Date.now()}`));
  const { name, options } = graderOf(flags);
  const { summary, reports } = await withGrader(name, options, gradingAt(k8s, flags.timeout), (grader) =>
    gradePredictions(tasks, predictions, {
      grader,
      runId: basename(out),
      timeoutMs: flags.timeout * 1000,
      allowTestEdits: Boolean(flags.allowTestEdits),
      out,
      workers: flags.concurrency,
      allowFrameworkAccess: Boolean(flags.allowTestFrameworkAccess),
    }),
  );
  if (flags.json) printJson(summary);
  else process.stdout.write(renderGrade(reports, summary, out));
  return summary;
}

/**
 * `alight eval swebench`: the harness over the instances through the gateway, each prediction graded; a table or
 * --json.
 */
export async function swebenchCommand(
  cmd: string,
  args: string[],
  flags: SwebenchFlags,
  probe?: (result: EvalResult, store: Store) => void,
) {
  refuseSwebenchFlags(flags);
  const { name, options } = graderOf(flags);
  return withStore(flags, async (store, fileConfig) => {
    const tasks = await instancesFor(store, flags, Boolean(probe));
    const config = withRunner(
      withOverrides(fileConfig, { upstream: { url: flags.upstream } }),
      { ...flags, image: undefined, runner: flags.runtime === 'k8s' ? 'k8s' : 'local' },
      {},
      true,
    );
    return withUpstream(config, flags, (c, upstreamApiKey) =>
      withInterrupt((signal) =>
        withGrader(name, options, gradingAt(c.k8s, flags.gradeTimeout), async (grader) => {
          const run = flags.run ?? defaultRunName('eval');
          const result = await evalSwebench({
            store,
            config: c,
            run,
            command: cmd,
            args,
            tasks,
            k: flags.n,
            workers: flags.concurrency,
            grader,
            reposDir: flags.repos ? resolve(flags.repos) : undefined,
            runtime: flags.runtime,
            timeoutMs: flags.timeout * 1000,
            gradeTimeoutMs: flags.gradeTimeout * 1000,
            allowTestEdits: Boolean(flags.allowTestEdits),
            allowFrameworkAccess: Boolean(flags.allowTestFrameworkAccess),
            out: resolve(flags.out ?? join(dirname(store.path), 'runs', run, 'eval')),
            adminKey: process.env.ALIGHT_ADMIN_KEY || newSecret(),
            upstreamApiKey,
            signal,
            onEvent: plainProgress((line) => process.stderr.write(`alight: ${line}\n`), 10_000),
          });
          if (probe) probe(result, store);
          else if (flags.json) printJson(result.summary);
          else process.stdout.write(`${renderEval(result, flags.n)}\n`);
          return result;
        }),
      ),
    );
  });
}

/** The instances to run: the file's or the store's (a probe: those kept before selection), or the ones named. */
async function instancesFor(store: Store, flags: SwebenchFlags, probe: boolean) {
  const rows = flags.fromDb
    ? keptAsTasks(store, probe ? 'select' : undefined).map((t) => t.data)
    : await readAllRows(flags.tasks!);
  const wanted = flags.instances ? new Set(flags.instances.split(',').map((s) => s.trim())) : null;
  const unknown = wanted ? [...wanted].filter((id) => !rows.some((r) => r.instance_id === id)) : [];
  if (unknown.length) throw new AlightError(`unknown instance id(s): ${unknown.join(', ')}`, ExitCode.input);
  return rows
    .filter((r) => !wanted || wanted.has(String(r.instance_id)))
    .map((row) => ({ row, grade: gradeTask(row, flags.imageTemplate) }));
}

/** Where the tasks, the model and the agents' workspaces come from: one of each. */
function refuseSwebenchFlags(flags: SwebenchFlags): void {
  if (Boolean(flags.tasks) === Boolean(flags.fromDb))
    throw new AlightError('pass --tasks <file> or --from-db', ExitCode.usage);
  // On Kubernetes the agents work in the instance images; --repos may still be where the local grader works.
  if (flags.runtime !== 'k8s' && Boolean(flags.repos) === Boolean(flags.runtime)) {
    throw new AlightError(
      'pass --repos <dir> (workspaces made here from clones or bundles) ' +
        "or --runtime podman|docker|k8s (a container of each instance's image)",
      ExitCode.usage,
    );
  }
}

/**
 * `alight eval compare A B`: two runs (names in the store's run folder, or summary.json paths), paired per instance.
 */
export async function compareCommand(a: string, b: string, flags: CompareFlags) {
  return withStore(flags, (store) => {
    const load = (name: string) => {
      const path = existsSync(name) ? name : join(dirname(store.path), 'runs', name, 'eval', 'summary.json');
      if (!existsSync(path)) throw new AlightError(`no eval summary for ${name} (looked for ${path})`, ExitCode.input);
      return JSON.parse(readFileSync(path, 'utf8')) as { submitted_ids: string[]; resolved_ids: string[] };
    };
    const c = compareRuns(load(a), load(b));
    if (flags.json) printJson(c);
    else process.stdout.write(renderCompare(c, a, b));
    return c;
  });
}

/**
 * `alight eval reward`: grades the workspace's current diff against the task (ALIGHT_TASK_JSON); prints 1 or 0, the
 * reason on stderr.
 */
export async function rewardCommand(flags: RewardFlags) {
  const raw = process.env.ALIGHT_TASK_JSON;
  if (!raw || raw === 'null')
    throw new AlightError(
      'ALIGHT_TASK_JSON is not set: run as a --reward-cmd of alight record/train with --tasks',
      ExitCode.usage,
    );
  const task = gradeTask(JSON.parse(raw) as Record<string, unknown>);
  const dir = mkdtempSync(join(tmpdir(), 'alight-reward-'));
  try {
    const report = await gradeInstance(task, workspaceDiff(resolve(flags.workspace ?? '.')), {
      site: {
        kind: 'host',
        reposDir: resolve(flags.repos),
        sandbox: await hostSandbox(flags.sandbox !== false, setupProgress(), notice),
      },
      timeoutMs: flags.timeout * 1000,
      allowTestEdits: Boolean(flags.allowTestEdits),
      logFile: join(dir, 'test_output.txt'),
      allowFrameworkAccess: Boolean(flags.allowTestFrameworkAccess),
    });
    process.stderr.write(
      `alight eval reward: ${task.instance_id} ${report.status}${report.error ? `: ${report.error}` : ''}` +
        `${report.guard.length ? ` (flagged: ${report.guard.map((g) => g.file).join(', ')})` : ''}\n`,
    );
    process.stdout.write(`${report.resolved ? 1 : 0}\n`);
    return report;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `alight data probe`: the harness k times on each task kept before selection, through eval swebench's machinery
 * (recorded, mode val, graded); each task's pass count stored with the run that measured it. Resumable by --run.
 */
export async function probeCommand(cmd: string, args: string[], flags: ProbeFlags) {
  const run = flags.run ?? defaultRunName('probe');
  return swebenchCommand(cmd, args, { ...flags, run, fromDb: true }, (result, store) => {
    const summary = storeProbes(store, result, flags.n);
    if (flags.json) printJson(summary);
    else process.stdout.write(renderProbe(summary));
  });
}
