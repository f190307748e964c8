import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Config, learningRate, type TrainConfig, trainsLora } from '../config/schema.js';
import type { ScoringEngine } from '../distill/score.js';
import { checkTeacher, openTeacher, type Teacher } from '../distill/teacher.js';
import { AlightError, ExitCode } from '../errors.js';
import { type Gateway, type GatewayOptions, startGateway } from '../gateway/server.js';
import { type JudgeRun, judgeRun } from '../judge/rewards.js';
import { withheldVars } from '../runner/env.js';
import type { RunLauncher } from '../runner/launcher.js';
import { gatewayFor, openLauncher } from '../runner/open-launcher.js';
import type { Task } from '../runner/tasks.js';
import { asLines } from '../setup/events.js';
import { ensurePythonEnv } from '../setup/python-env.js';
import { ensureVerlEnv } from '../setup/verl-env.js';
import type { Store } from '../store/store.js';
import { Worker } from '../worker/client.js';
import type { GroupPool } from './async-groups.js';
import type { StepMetrics, TrainListener } from './events.js';
import { type ServedCheck, servedPolicyCheck } from './served-check.js';
import { type Serving, vllmServing, workerServing } from './serving.js';
import { groupPool, runStep, type StepContext } from './step.js';
import { recentSamples, runTrackers, type Trackers } from './trackers.js';
import { type VerlPlan, verlHost, verlPlan } from './verl-config.js';

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
    if (c.serveVllm) {
      serving = await vllmServing({
        worker: first.worker,
        runDir,
        base: trainsLora(c) ? (c.model ?? null) : null,
        device: c.vllmDevice,
        gpuMemoryUtilization: c.gpuMemoryUtilization,
        timeoutMs: c.workerTimeoutS * 1000,
        signal,
      });
    }
    gateway = await startGateway(gatewayOptions(options, c, serving, launcher));
    const reporting = trackers && { trackers, since: Date.now() };
    const served = servedCheckFor(c, gateway, serving);
    const judge = judgeRun(config.reward);
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
      judge,
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
  const timeoutMs = c.workerTimeoutS * 1000;
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
    holdWhilePausedMs: c.asyncGroups > 0 ? c.workerTimeoutS * 1000 : 0,
    onCall: (call) => onEvent({ type: 'call', ...call }),
  };
}

/**
 * The run's train settings, checked before anything starts. verl: the cluster and model are checked too, and rows come
 * in multiples of the data-parallel size.
 */
function checkedTrainConfig(train: TrainConfig): { c: TrainConfig; plan: VerlPlan | null } {
  const plan = train.backend === 'verl' ? verlPlan(train, verlHost(train, null)) : null;
  const c = plan ? { ...train, rowMultiple: train.rowMultiple ?? plan.worldSize } : train;
  const refuse = (message: string): never => {
    throw new AlightError(message, ExitCode.usage);
  };
  if (plan && c.rowMultiple! % plan.worldSize !== 0)
    refuse(
      `train.rowMultiple (${c.rowMultiple}) must be a multiple of the ${plan.worldSize} GPUs: each gets whole rows`,
    );
  if (!c.model) refuse('no model: pass --model <Hugging Face model folder> or set train.model in alight.config.yaml');
  if (c.serveVllm && c.backend === 'verl')
    refuse('--serve-vllm is for the torch backend: verl serves the policy with vLLM already');
  if (c.vllmDevice && !c.serveVllm && c.backend !== 'verl')
    refuse('--device chooses the vLLM of --serve-vllm (or where verl runs): pass both, or neither');
  if (!c.distill.taskReward && !(c.distill.teacher && c.distill.coef > 0))
    refuse('--task-reward off leaves nothing to learn from: pass a --teacher (and a --distill-coef above 0)');
  if (c.asyncGroups > 0 && c.asyncGroups < c.batchSize)
    refuse(
      `train.asyncGroups (${c.asyncGroups}) must be at least ` +
        `train.batchSize (${c.batchSize}): a step trains on batchSize groups`,
    );
  return { c, plan };
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
  /** reward.judge: scores each step's groups before the batch (null: the rewards are the harness's). */
  judge: JudgeRun | null;
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
    steps: c.steps,
    gatewayUrl: s.gateway.url,
    workerLog: s.workerLog,
  });
  while (step < c.steps) {
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
      judge: s.judge,
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
  if (s.workers.restarts++ >= s.c.restarts)
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

/** A signal that aborts when the run's does (Ctrl-C) or, with `workerEnded` as the reason, when `worker` exits. */
function abortedByRunOrWorker(
  run: AbortSignal,
  worker: Worker,
): { signal: AbortSignal; abort(why: string): void; release(): void } {
  const controller = new AbortController();
  const abort = (): void => controller.abort();
  run.addEventListener('abort', abort, { once: true });
  void worker.exit.then(() => controller.abort(workerEnded));
  return {
    signal: controller.signal,
    abort: (why) => controller.abort(why),
    release: () => run.removeEventListener('abort', abort),
  };
}

type StartedWorker = { worker: Worker; endpoints: { url: string; model: string }[] };

/**
 * The run's Python workers: the current one, the async group pool it serves, and every one started (all stopped when
 * the run ends). Ctrl-C stops whichever worker is current, even while it is still loading the model.
 */
class WorkerSupervisor {
  /** Restarts after a worker died, so far. */
  restarts = 0;
  private readonly started: Worker[] = [];
  private latest: StartedWorker | null = null;
  private pool: { pool: GroupPool; stop: ReturnType<typeof abortedByRunOrWorker> } | null = null;
  private readonly stopCurrent = (): void => this.started.at(-1)?.kill('SIGTERM');

  constructor(private readonly o: WorkerStart) {
    o.signal.addEventListener('abort', this.stopCurrent, { once: true });
  }

  get current(): StartedWorker {
    return this.latest!;
  }

  /** A new current worker, initialised. */
  async start(): Promise<StartedWorker> {
    this.latest = await startWorker(this.o, this.started);
    return this.latest;
  }

  /**
   * Async groups (asyncGroups > 0) outlive a step: made at the first step that needs them, they stop with the run or
   * with the worker that serves them.
   */
  poolFor(ctx: StepContext, step: number): GroupPool | undefined {
    if (this.o.c.asyncGroups > 0 && !this.pool) {
      const stop = abortedByRunOrWorker(this.o.signal, this.current.worker);
      this.pool = { pool: groupPool(ctx, step, stop.signal), stop };
    }
    return this.pool?.pool;
  }

  /**
   * Stops the async harnesses still running (the run ended, or their worker died) and waits for them; `why` becomes
   * their rollouts' error.
   */
  async stopPool(why: string): Promise<void> {
    if (!this.pool) return;
    const { pool, stop } = this.pool;
    this.pool = null;
    stop.abort(why);
    await pool.settle();
  }

  /** Ctrl-C no longer stops a worker: the run is ending. */
  unwatch(): void {
    this.o.signal.removeEventListener('abort', this.stopCurrent);
  }

  async stopAll(): Promise<void> {
    for (const w of this.started) await w.stop();
  }
}

/**
 * What starting a worker takes: its Python, its log, the run's settings (verl's overrides), its Ctrl-C, and what it
 * trains for (RL's objective unless `alight sft`).
 */
interface WorkerStart {
  python: string;
  logFile: string;
  c: TrainConfig;
  signal: AbortSignal;
  overrides?: string[];
  env?: Record<string, string>;
  objective?: 'sft';
}

/**
 * The worker process, initialised: its engine endpoints (one for torch, one per vLLM server for verl, given its
 * overrides). It joins `started` before it loads the model, so that Ctrl-C can stop it meanwhile.
 */
export async function startWorker(o: WorkerStart, started: Worker[]): Promise<StartedWorker> {
  const { c } = o;
  const worker = Worker.start({ python: o.python, logFile: o.logFile, env: o.env });
  started.push(worker);
  if (o.signal.aborted) worker.kill('SIGTERM');
  const sft = o.objective === 'sft';
  const common = {
    backend: c.backend,
    model: c.model,
    seed: c.seed,
    // Supervised steps have no reference to stay near and no rollout policy to correct for.
    kl_coef: sft ? 0 : c.klCoef,
    is_correction: sft ? 'none' : c.isCorrection,
    is_cap: c.isCap,
    ...(sft && { objective: 'sft' }),
  };
  const init = await worker.call(
    'init',
    c.backend === 'verl'
      ? {
          ...common,
          gpus: c.gpus,
          nodes: c.nodes,
          ray_address: c.rayAddress ?? null,
          old_logprobs: c.oldLogprobs,
          overrides: o.overrides,
        }
      : {
          ...common,
          lr: learningRate(c),
          weight_decay: c.weightDecay,
          max_grad_norm: c.maxGradNorm,
          clip_low: c.clipLow,
          clip_high: c.clipHigh,
          ppo_epochs: c.ppoEpochs,
          micro_batch_rows: c.microBatchRows,
          threads: c.threads ?? null,
          // No more calls than harnesses can wait at once: a batch that has them all runs without waiting out the
          // worker's gather window for one that cannot come (0.5 s a batch: most of a small step's time).
          max_batch: Math.min(c.concurrency, c.n * c.batchSize),
          ...loraParams(c),
        },
    c.workerTimeoutS * 1000,
  );
  return { worker, endpoints: init.endpoints };
}

/**
 * The served-policy check on the engine the gateway routes to (the torch worker's server, alight's vLLM, or verl's first
 * vLLM server, scored by verl's actor).
 */
function servedCheckFor(c: TrainConfig, gateway: Gateway, serving: Serving): ServedCheck {
  const engine = () => ({ ...gateway.endpoints.all()[0], apiKey: serving.apiKey });
  return servedPolicyCheck(engine, c.servedTolerance, c.workerTimeoutS * 1000);
}

/** The torch worker's LoRA settings (alight_worker/lora.py); none for full fine-tuning. */
function loraParams(c: TrainConfig): Record<string, unknown> {
  const { lora } = c;
  if (!trainsLora(c)) return {};
  return {
    lora_rank: lora.rank,
    lora_alpha: lora.alpha,
    lora_dropout: lora.dropout,
    lora_targets: lora.targets,
    lora_from: lora.from ?? null,
  };
}

/**
 * Routes the gateway to the current worker's engines, loads the run's last checkpoint into it (if any) and serves it,
 * forgets the steps after it, and returns the next step.
 */
async function restore({ store, run, workers, gateway, serving, served, c }: Session): Promise<number> {
  const { worker, endpoints } = workers.current;
  const timeoutMs = c.workerTimeoutS * 1000;
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

/** The error of the rollouts a dying worker takes with it (they are redone by the step's next attempt). */
const workerEnded = 'stopped: the worker serving it ended';

/** A suffix that tells a step's groups from those of an earlier, interrupted attempt at the same step. */
function attemptTag(restarts: number): string {
  return `.${process.pid.toString(36)}${restarts ? `-${restarts}` : ''}`;
}
