import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from '../config/schema.js';
import { type TrainConfig, trainsLora } from '../config/train-schema.js';
import type { ScoringEngine } from '../distill/score.js';
import { checkTeacher, openTeacher, type Teacher } from '../distill/teacher.js';
import { AlightError, ExitCode } from '../errors.js';
import { type Gateway, type GatewayOptions, startGateway } from '../gateway/server.js';
import { openScoring, type Scoring } from '../rewards/index.js';
import { withheldVars } from '../runner/env.js';
import type { RunLauncher } from '../runner/launcher.js';
import { gatewayFor, openLauncher } from '../runner/open-launcher.js';
import type { Task } from '../runner/tasks.js';
import { asLines } from '../setup/events.js';
import { ensurePythonEnv } from '../setup/python-env.js';
import { ensureVerlEnv } from '../setup/verl-env.js';
import type { Store } from '../store/store.js';
import type { StepMetrics, TrainListener } from './events.js';
import { checkedTrainConfig } from './rules.js';
import { type ServedCheck, servedPolicyCheck } from './served-check.js';
import { type Serving, vllmServing, workerServing } from './serving.js';
import { runStep, type StepContext } from './step.js';
import { abortedByRunOrWorker, WorkerSupervisor, workerEnded } from './supervisor.js';
import { recentSamples, runTrackers, type Trackers } from './trackers.js';
import { verlHost, verlPlan } from './verl-config.js';

export interface TrainOptions {
  store: Store;
  config: Config;
  run: string;
  command: string;
  args: string[];
  tasks: Task[];
  valTasks: Task[] | null;
  /** Continue the run from its last checkpoint (else it must be new). */
  resume: boolean;
  adminKey: string;
  signal: AbortSignal;
  onEvent: TrainListener;
}

export interface TrainResult {
  run: string;
  runDir: string;
  steps: { step: number; metrics: StepMetrics }[];
  workerLog: string;
}

/**
 * `alight train`: the Python worker serves and trains the policy, the gateway records every call the harness makes
 * through it, and each step runs `runStep`. A crashed worker is restarted from the last checkpoint (`restarts` times);
 * the steps after it are redone with the same tasks. Ctrl-C stops the harnesses and the worker, losing at most the
 * step in progress.
 */
export async function train(options: TrainOptions): Promise<TrainResult> {
  const { store, config, run, signal, onEvent } = options;
  const { c, plan } = checkedTrainConfig(config.train);
  openRun(store, run, options.resume, { train: c, reward: config.reward });
  const runDir = resolve(store.path, '..', 'runs', run);
  mkdirSync(runDir, { recursive: true });
  const workerLog = join(runDir, 'worker.log');
  const log = (message: string): void => onEvent({ type: 'log', message });
  const python = c.backend === 'verl' ? await ensureVerlEnv(asLines(log)) : await ensurePythonEnv(asLines(log));
  // The plan again, now that the verl virtualenv can say whether flash-attn is there.
  const verl = plan && verlPlan(c, verlHost(c, python));
  const workers = new WorkerSupervisor({
    python,
    logFile: workerLog,
    c,
    signal,
    overrides: verl?.overrides,
    env: verl?.env,
  });
  let gateway: Gateway | null = null;
  let serving: Serving = workerServing;
  let launcher: RunLauncher | null = null;
  let trackers: Trackers | null = null;
  let teacher: Teacher | null = null;
  try {
    trackers = await runTrackers(c, { runDir, run }, log);
    launcher = await openLauncher(config, log);
    const first = await workers.start();
    if (c.vllm.serve) {
      serving = await vllmServing({
        worker: first.worker,
        runDir,
        base: trainsLora(c) ? (c.model ?? null) : null,
        device: c.vllm.device,
        gpuMemoryUtilization: c.vllm.gpuMemoryUtilization,
        timeoutMs: c.worker.timeoutS * 1000,
        signal,
      });
    }
    gateway = await startGateway(gatewayOptions(options, c, serving, launcher));
    const reporting = trackers && { trackers, since: Date.now() };
    const served = servedCheckFor(c.worker, gateway, serving);
    const scoring = openScoring({ store, run, reward: config.reward });
    const student = { ...serving.endpoints(first.endpoints)[0], apiKey: serving.apiKey };
    teacher = await distillTeacher(c, { python, logFile: join(runDir, 'teacher.log') }, student);
    await trainSteps({
      ...options,
      c,
      runDir,
      workerLog,
      gateway,
      serving,
      served,
      workers,
      launcher,
      reporting,
      scoring,
      teacher: teacher?.engine ?? null,
    });
    const steps = store.trainSteps(run).map((s) => ({ step: s.step, metrics: s.metrics as StepMetrics }));
    return { run, runDir, workerLog, steps };
  } catch (err) {
    if (signal.aborted && !(err instanceof AlightError && err.exitCode === ExitCode.interrupted)) {
      throw new AlightError(
        `interrupted; continue with: alight train --resume ${run} -- <harness>`,
        ExitCode.interrupted,
      );
    }
    throw err;
  } finally {
    workers.unwatch();
    await workers.stopPool('not trained: the run ended first');
    await launcher?.close();
    await gateway?.close();
    await workers.stopAll();
    await serving.stop();
    await teacher?.stop();
    await trackers?.close();
  }
}

/**
 * The teacher of on-policy distillation (train.distill.teacher), opened and checked against the student the gateway
 * routes to before step 1: the same tokenizer, another model.
 */
async function distillTeacher(
  c: TrainConfig,
  o: { python: string; logFile: string },
  student: ScoringEngine,
): Promise<Teacher | null> {
  const timeoutMs = c.worker.timeoutS * 1000;
  const teacher = await openTeacher(c, { ...o, timeoutMs });
  if (!teacher) return null;
  try {
    await checkTeacher(teacher.engine, student, timeoutMs);
    return teacher;
  } catch (err) {
    await teacher.stop();
    throw err;
  }
}

/** The gateway in front of the policy being trained, which `serving` serves. */
function gatewayOptions(
  { store, adminKey, config, onEvent }: TrainOptions,
  c: TrainConfig,
  serving: Serving,
  launcher: RunLauncher,
): GatewayOptions {
  return {
    store,
    adminKey,
    gateway: gatewayFor(config, launcher),
    upstreamApiKey: serving.apiKey,
    upstream: { ...config.upstream, url: undefined, kind: 'vllm', retries: 0, apiKeyEnv: undefined },
    // Async harnesses keep calling through an update: their calls wait for it instead of being refused.
    holdWhilePausedMs: c.rollouts.asyncGroups > 0 ? c.worker.timeoutS * 1000 : 0,
    onCall: (call) => onEvent({ type: 'call', ...call }),
  };
}

/** The run in the store: new, or (`resume`) an existing one, with the settings it continues with. */
function openRun(store: Store, run: string, resume: boolean, settings: Pick<Config, 'train' | 'reward'>): void {
  const existing = store.getRun(run);
  if (existing && !resume)
    throw new AlightError(`run ${run} exists: pass --resume ${run} to continue it, or another --run`, ExitCode.usage);
  if (!existing && resume)
    throw new AlightError(`no run ${run} to resume in ${store.path} (alight runs list)`, ExitCode.usage);
  store.ensureRun(run, 'train', settings);
  store.setRunConfig(run, settings); // a resume may change settings (more steps): the next resume starts from these
}

/** What the steps share: the run's options, its checked settings, and what serves and trains the policy. */
interface Session extends TrainOptions {
  launcher: RunLauncher;
  c: TrainConfig;
  runDir: string;
  workerLog: string;
  gateway: Gateway;
  serving: Serving;
  served: ServedCheck;
  /** The sources that score each step's groups before the batch (reward.judge), src/rewards/. */
  scoring: Scoring;
  /** train.distill.teacher: scores each step's rows before the update (null: no distillation). */
  teacher: ScoringEngine | null;
  workers: WorkerSupervisor;
  /** The trackers, and when the last step they were told of ended (its samples are the rollouts ended since). */
  reporting: { trackers: Trackers; since: number } | null;
}

/** From the last checkpoint to the last step; a step the worker died in is redone by a new worker. */
async function trainSteps(s: Session): Promise<void> {
  const { c, run } = s;
  let step = await restore(s);
  s.onEvent({
    type: 'train-started',
    run,
    firstStep: step,
    steps: c.schedule.steps,
    gatewayUrl: s.gateway.url,
    workerLog: s.workerLog,
  });
  while (step < c.schedule.steps) {
    if (s.signal.aborted)
      throw new AlightError(`interrupted; continue with: alight train --resume ${run} …`, ExitCode.interrupted);
    try {
      await trainStep(s, step);
      step++;
    } catch (err) {
      step = await recover(s, err, step);
    }
  }
}

/**
 * One step with the current worker. Its death ends the step at once: the harnesses are stopped rather than left to fail
 * one by one.
 */
async function trainStep(s: Session, step: number): Promise<void> {
  const { worker } = s.workers.current;
  const stepAbort = abortedByRunOrWorker(s.signal, worker);
  try {
    const ctx: StepContext = {
      store: s.store,
      gateway: s.gateway,
      launcher: s.launcher,
      serving: s.serving,
      served: s.served,
      scoring: s.scoring,
      teacher: s.teacher,
      worker,
      config: s.c,
      run: s.run,
      runDir: s.runDir,
      command: s.command,
      args: s.args,
      tasks: s.tasks,
      valTasks: s.valTasks,
      attempt: attemptTag(s.workers.restarts),
      withhold: withheldVars({}),
      signal: stepAbort.signal,
      onEvent: s.onEvent,
    };
    const { metrics, checkpoint } = await runStep({ ...ctx, pool: s.workers.poolFor(ctx, step) }, step);
    s.store.putTrainStep(s.run, step, metrics, checkpoint);
    s.onEvent({ type: 'step-end', step, metrics, checkpoint });
    if (s.reporting) {
      s.reporting.trackers.step(step, metrics, recentSamples(s.store, s.run, s.reporting.since));
      s.reporting.since = Date.now();
    }
  } finally {
    stepAbort.release();
  }
}

/**
 * After a failed step: Ctrl-C, or an error while the worker lives, ends the run; a dead worker is replaced (at most
 * `restarts` times) and the run goes on from the last checkpoint, whose next step this returns.
 */
async function recover(s: Session, err: unknown, step: number): Promise<number> {
  if (s.signal.aborted)
    throw new AlightError(
      `interrupted during step ${step}; continue with: alight train --resume ${s.run} …`,
      ExitCode.interrupted,
    );
  const ended = s.workers.current.worker.ended;
  if (ended === null) throw err;
  const why = `the Python worker ${ended} during step ${step} (log: ${s.workerLog})`;
  if (s.workers.restarts++ >= s.c.worker.restarts)
    throw new AlightError(
      `${why}; continue from the last checkpoint with: alight train --resume ${s.run} -- <harness>`,
      ExitCode.failure,
    );
  s.onEvent({ type: 'worker-restart', reason: why, fromStep: step });
  await s.workers.stopPool(workerEnded);
  s.gateway.resume();
  await s.workers.start();
  return restore(s);
}

/**
 * The served-policy check on the engine the gateway routes to (the torch worker's server, alight's vLLM, or verl's first
 * vLLM server, scored by verl's actor).
 */
function servedCheckFor(worker: TrainConfig['worker'], gateway: Gateway, serving: Serving): ServedCheck {
  const engine = () => ({ ...gateway.endpoints.all()[0], apiKey: serving.apiKey });
  return servedPolicyCheck(engine, worker.servedTolerance, worker.timeoutS * 1000);
}

/**
 * Routes the gateway to the current worker's engines, loads the run's last checkpoint into it (if any) and serves it,
 * forgets the steps after it, and returns the next step.
 */
async function restore({ store, run, workers, gateway, serving, served, c }: Session): Promise<number> {
  const { worker, endpoints } = workers.current;
  const timeoutMs = c.worker.timeoutS * 1000;
  gateway.endpoints.replaceAll(serving.endpoints(endpoints).map((e) => ({ ...e, kind: 'vllm', version: 0 })));
  const saved = store
    .trainSteps(run)
    .filter((s) => s.checkpoint !== null)
    .at(-1);
  store.truncateTrainSteps(run, saved?.step ?? -1);
  const version = saved ? (await worker.call('load', { path: saved.checkpoint! }, timeoutMs)).version : 0;
  if (saved) await serving.publish(worker, version, timeoutMs);
  else await serving.reset?.(worker, timeoutMs);
  for (const e of gateway.endpoints.all()) gateway.endpoints.upsert({ ...e, version });
  served.forget();
  await served.check(worker, version);
  return saved ? saved.step + 1 : 0;
}

/** A suffix that tells a step's groups from those of an earlier, interrupted attempt at the same step. */
function attemptTag(restarts: number): string {
  return `.${process.pid.toString(36)}${restarts ? `-${restarts}` : ''}`;
}
