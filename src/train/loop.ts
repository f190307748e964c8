import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from '../config/schema.js';
import { AlightError, ExitCode } from '../errors.js';
import { type Gateway, startGateway } from '../gateway/server.js';
import type { Task } from '../runner/tasks.js';
import { asLines } from '../setup/events.js';
import { ensurePythonEnv } from '../setup/python-env.js';
import { ensureVerlEnv, gpuMemoryGb } from '../setup/verl-env.js';
import type { Store } from '../store/store.js';
import { Worker } from '../worker/client.js';
import type { GroupPool } from './async-groups.js';
import type { StepMetrics, TrainListener } from './events.js';
import { type Serving, vllmServing, workerServing } from './serving.js';
import { groupPool, runStep, type StepContext } from './step.js';
import { verlPlan } from './verl-config.js';

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
  // verl: the cluster and model are checked before anything starts; rows come in multiples of the data-parallel size.
  const plan = config.train.backend === 'verl' ? verlPlan(config.train, gpuMemoryGb()) : null;
  const c = plan ? { ...config.train, rowMultiple: config.train.rowMultiple ?? plan.worldSize } : config.train;
  if (plan && c.rowMultiple! % plan.worldSize !== 0) {
    throw new AlightError(
      `train.rowMultiple (${c.rowMultiple}) must be a multiple of the ${plan.worldSize} GPUs: each gets whole rows`,
      ExitCode.usage,
    );
  }
  if (!c.model)
    throw new AlightError(
      'no model: pass --model <Hugging Face model folder> or set train.model in alight.config.yaml',
      ExitCode.usage,
    );
  if (c.serveVllm && c.backend === 'verl')
    throw new AlightError(
      '--serve-vllm is for the torch backend: verl serves the policy with vLLM already',
      ExitCode.usage,
    );
  if (c.vllmDevice && !c.serveVllm)
    throw new AlightError('--device chooses the vLLM of --serve-vllm: pass both, or neither', ExitCode.usage);
  if (c.asyncGroups > 0 && c.asyncGroups < c.batchSize) {
    throw new AlightError(
      `train.asyncGroups (${c.asyncGroups}) must be at least ` +
        `train.batchSize (${c.batchSize}): a step trains on batchSize groups`,
      ExitCode.usage,
    );
  }
  const existing = store.getRun(run);
  if (existing && !options.resume)
    throw new AlightError(`run ${run} exists: pass --resume ${run} to continue it, or another --run`, ExitCode.usage);
  if (!existing && options.resume)
    throw new AlightError(`no run ${run} to resume in ${store.path} (alight runs list)`, ExitCode.usage);
  store.ensureRun(run, 'train', { train: c });
  store.setRunConfig(run, { train: c }); // a resume may change settings (more steps): the next resume starts from these
  const runDir = resolve(store.path, '..', 'runs', run);
  mkdirSync(runDir, { recursive: true });
  const workerLog = join(runDir, 'worker.log');
  const log = (message: string): void => onEvent({ type: 'log', message });
  const python = c.backend === 'verl' ? await ensureVerlEnv(asLines(log)) : await ensurePythonEnv(asLines(log));

  // Ctrl-C stops whichever worker is current, even while it is still loading the model.
  const workers: Worker[] = [];
  const stopWorker = (): void => workers.at(-1)?.kill('SIGTERM');
  signal.addEventListener('abort', stopWorker, { once: true });
  let gateway: Gateway | null = null;
  let pool: { pool: GroupPool; abort: AbortController } | null = null;
  let serving: Serving = workerServing;
  let restarts = 0;
  try {
    let worker = await startWorker(python, workerLog, options, workers, plan?.overrides);
    if (c.serveVllm) {
      serving = await vllmServing({
        worker: worker.worker,
        runDir,
        device: c.vllmDevice,
        gpuMemoryUtilization: c.gpuMemoryUtilization,
        timeoutMs: c.workerTimeoutS * 1000,
        signal,
      });
    }
    gateway = await startGateway({
      store,
      adminKey: options.adminKey,
      gateway: config.gateway,
      upstreamApiKey: serving.apiKey,
      upstream: { ...config.upstream, url: undefined, kind: 'vllm', retries: 0, apiKeyEnv: undefined },
      // Async harnesses keep calling through an update: their calls wait for it instead of being refused.
      holdWhilePausedMs: c.asyncGroups > 0 ? c.workerTimeoutS * 1000 : 0,
      onCall: (call) => onEvent({ type: 'call', ...call }),
    });
    let step = await restore(store, run, worker, gateway, serving, c.workerTimeoutS);
    onEvent({ type: 'train-started', run, firstStep: step, steps: c.steps, gatewayUrl: gateway.url, workerLog });
    while (step < c.steps) {
      if (signal.aborted)
        throw new AlightError(`interrupted; continue with: alight train --resume ${run} …`, ExitCode.interrupted);
      // A dying worker ends the step at once: its harnesses are stopped rather than left to fail one by one.
      const stepAbort = new AbortController();
      const abortStep = (): void => stepAbort.abort();
      signal.addEventListener('abort', abortStep, { once: true });
      void worker.worker.exit.then(() => stepAbort.abort(workerEnded));
      const ctx: StepContext = {
        store,
        gateway,
        serving,
        worker: worker.worker,
        config: c,
        run,
        runDir,
        command: options.command,
        args: options.args,
        tasks: options.tasks,
        valTasks: options.valTasks,
        attempt: attemptTag(restarts),
        withhold: ['ALIGHT_ADMIN_KEY'],
        signal: stepAbort.signal,
        onEvent,
      };
      // Async groups outlive a step: they stop with the run or with the worker that serves them.
      if (c.asyncGroups > 0 && !pool) {
        const poolAbort = new AbortController();
        signal.addEventListener('abort', () => poolAbort.abort(), { once: true });
        void worker.worker.exit.then(() => poolAbort.abort(workerEnded));
        pool = { pool: groupPool(ctx, step, poolAbort.signal), abort: poolAbort };
      }
      try {
        const { metrics, checkpoint } = await runStep({ ...ctx, pool: pool?.pool }, step);
        store.putTrainStep(run, step, metrics, checkpoint);
        onEvent({ type: 'step-end', step, metrics, checkpoint });
        step++;
      } catch (err) {
        if (signal.aborted)
          throw new AlightError(
            `interrupted during step ${step}; continue with: alight train --resume ${run} …`,
            ExitCode.interrupted,
          );
        const ended = worker.worker.ended;
        if (ended === null) throw err;
        const why = `the Python worker ${ended} during step ${step} (log: ${workerLog})`;
        if (restarts++ >= c.restarts)
          throw new AlightError(
            `${why}; continue from the last checkpoint with: alight train --resume ${run} -- <harness>`,
            ExitCode.failure,
          );
        onEvent({ type: 'worker-restart', reason: why, fromStep: step });
        if (pool) await stopPool(pool, workerEnded);
        pool = null;
        gateway.resume();
        worker = await startWorker(python, workerLog, options, workers, plan?.overrides);
        step = await restore(store, run, worker, gateway, serving, c.workerTimeoutS);
      } finally {
        signal.removeEventListener('abort', abortStep);
      }
    }
    return {
      run,
      runDir,
      workerLog,
      steps: store.trainSteps(run).map((s) => ({ step: s.step, metrics: s.metrics as StepMetrics })),
    };
  } catch (err) {
    if (signal.aborted && !(err instanceof AlightError && err.exitCode === ExitCode.interrupted)) {
      throw new AlightError(
        `interrupted; continue with: alight train --resume ${run} -- <harness>`,
        ExitCode.interrupted,
      );
    }
    throw err;
  } finally {
    signal.removeEventListener('abort', stopWorker);
    if (pool) await stopPool(pool, 'not trained: the run ended first');
    await gateway?.close();
    for (const w of workers) await w.stop();
    await serving.stop();
  }
}

/**
 * The worker process, initialised: its engine endpoints (one for torch, one per vLLM server for verl, given its
 * overrides).
 */
async function startWorker(
  python: string,
  logFile: string,
  options: TrainOptions,
  started: Worker[],
  verlOverrides?: string[],
): Promise<{ worker: Worker; endpoints: { url: string; model: string }[] }> {
  const c = options.config.train;
  const worker = Worker.start({ python, logFile });
  started.push(worker);
  if (options.signal.aborted) worker.kill('SIGTERM');
  const common = {
    backend: c.backend,
    model: c.model,
    seed: c.seed,
    kl_coef: c.klCoef,
    is_correction: c.isCorrection,
    is_cap: c.isCap,
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
          overrides: verlOverrides,
        }
      : {
          ...common,
          lr: c.lr,
          weight_decay: c.weightDecay,
          max_grad_norm: c.maxGradNorm,
          clip_low: c.clipLow,
          clip_high: c.clipHigh,
          ppo_epochs: c.ppoEpochs,
          micro_batch_rows: c.microBatchRows,
          threads: c.threads ?? null,
        },
    c.workerTimeoutS * 1000,
  );
  return { worker, endpoints: init.endpoints };
}

/**
 * Routes the gateway to a (new) worker's engines, loads the run's last checkpoint into it (if any) and serves it,
 * forgets the steps after it, and returns the next step.
 */
async function restore(
  store: Store,
  run: string,
  started: { worker: Worker; endpoints: { url: string; model: string }[] },
  gateway: Gateway,
  serving: Serving,
  timeoutS: number,
): Promise<number> {
  const { worker } = started;
  gateway.endpoints.replaceAll(serving.endpoints(started.endpoints).map((e) => ({ ...e, kind: 'vllm', version: 0 })));
  const saved = store
    .trainSteps(run)
    .filter((s) => s.checkpoint !== null)
    .at(-1);
  store.truncateTrainSteps(run, saved?.step ?? -1);
  const version = saved ? (await worker.call('load', { path: saved.checkpoint! }, timeoutS * 1000)).version : 0;
  if (saved) await serving.publish(worker, version, timeoutS * 1000);
  else await serving.reset?.(worker, timeoutS * 1000);
  for (const e of gateway.endpoints.all()) gateway.endpoints.upsert({ ...e, version });
  return saved ? saved.step + 1 : 0;
}

/**
 * Stops the async harnesses still running (the run ended, or their worker died) and waits for them; `why` becomes their
 * rollouts' error.
 */
async function stopPool(p: { pool: GroupPool; abort: AbortController }, why: string): Promise<void> {
  p.abort.abort(why);
  await p.pool.settle();
}

/** The error of the rollouts a dying worker takes with it (they are redone by the step's next attempt). */
const workerEnded = 'stopped: the worker serving it ended';

/** A suffix that tells a step's groups from those of an earlier, interrupted attempt at the same step. */
function attemptTag(restarts: number): string {
  return `.${process.pid.toString(36)}${restarts ? `-${restarts}` : ''}`;
}
