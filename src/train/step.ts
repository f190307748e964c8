import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { tasksForStep } from '../algo/schedule.js';
import { mean, sampleStd } from '../algo/stats.js';
import type { TrainConfig } from '../config/train-schema.js';
import { type DistillMetrics, distilBatch, type ScoringEngine } from '../distill/score.js';
import { AlightError, ExitCode } from '../errors.js';
import { type Scoring, scoreRollouts } from '../rewards/index.js';
import { isInfraFailure } from '../rollouts/state.js';
import type { Launcher } from '../runner/launcher.js';
import { groupJobs, type RolloutBatch, type RunSession, runRollouts } from '../runner/run-rollouts.js';
import type { Task } from '../runner/tasks.js';
import type { BatchTensors } from '../samples/batch.js';
import { buildStepBatch } from '../samples/run-samples.js';
import { Slots } from '../slots.js';
import type { RolloutSummary, Store } from '../store/store.js';
import type { Worker } from '../worker/client.js';
import { type DoneGroup, GroupPool } from './async-groups.js';
import type { StepMetrics, TrainListener } from './events.js';
import type { ServedCheck } from './served-check.js';
import type { Serving } from './serving.js';

/** A training run's session (the store, the gateway, where harnesses run, the run, its signal and keys), and the rest. */
export interface StepContext extends RunSession {
  /** Where the harnesses run. */
  launcher: Launcher;
  /** Who serves the policy; publishes each update's weights. */
  serving: Serving;
  worker: Worker;
  config: TrainConfig;
  run: string;
  runDir: string;
  command: string;
  args: string[];
  tasks: Task[];
  valTasks: Task[] | null;
  /** Distinguishes the groups of a step redone after a resume from those of the interrupted attempt. */
  attempt: string;
  /** The served-policy check after each sync. */
  served: ServedCheck;
  /** The sources that score after the rollouts (reward.judge): src/rewards/. */
  scoring: Scoring;
  /** On-policy distillation's teacher (train.distill.teacher), or null. */
  teacher: ScoringEngine | null;
  /** Async rollouts (asyncGroups > 0): the groups in flight across steps. */
  pool?: GroupPool;
  onEvent: TrainListener;
}

/**
 * One step: B tasks × n rollouts through the harness (or, async, the first B groups of the pool to complete), the
 * batch from the finished ones, the worker's update, the new weights served (version step + 1), then validation and a
 * checkpoint when due.
 */
export async function runStep(
  ctx: StepContext,
  step: number,
): Promise<{ metrics: StepMetrics; checkpoint: string | null }> {
  const { config: c, gateway, worker } = ctx;
  const timer = phaseTimer(ctx, step);

  timer.start('rollouts');
  const fresh = ctx.pool ? await freshGroups(ctx, ctx.pool, step) : null;
  const ids = fresh ? fresh.ids : await stepRollouts(ctx, step);
  if (ctx.signal.aborted) throw new Error('interrupted');
  // Scorers (a judge) read the recorded calls, not the engine, so they run before the drain, each a phase of its own;
  // what they cannot score is left out.
  const judged = await scoreRollouts(ctx.store, ctx.scoring, ids, (source) => timer.start(source));
  // No call may reach the engine while the weights change: new calls wait (async) or are refused, those under way
  // finish.
  timer.start('drain');
  const inFlight = ctx.pool?.runningRollouts ?? 0;
  gateway.pause();
  await gateway.drain(30_000);

  timer.start('batch');
  const scored = ids.filter((id) => !judged.failed.has(id));
  const out = join(ctx.runDir, 'batches', `step-${step}.safetensors`);
  const distilled: Partial<DistillMetrics> = {};
  const distil = ctx.teacher && distiller(ctx.teacher, c.distill, timer, (m) => Object.assign(distilled, m));
  const prepared = await prepareBatch(ctx.store, scored, c, out, step, distil ?? undefined);

  timer.start('update');
  const batchPath = prepared.built.out;
  const update = batchPath
    ? await worker.call('train_step', { batch_path: batchPath, step }, c.worker.timeoutS * 1000)
    : { metrics: { update_skipped: 1 } }; // every group scored alike: the weights stay, the version still moves on

  timer.start('sync');
  const version = step + 1;
  await ctx.serving.publish(worker, version, c.worker.timeoutS * 1000);
  for (const e of gateway.endpoints.all()) gateway.endpoints.upsert({ ...e, version });
  // Before any harness call reaches the new weights: the engine alone, so its answer is the probe's own.
  timer.start('check');
  const served = await ctx.served.check(worker, version);
  gateway.resume();
  ctx.pool?.fill();

  const valReward =
    ctx.valTasks && due(c.schedule.valEvery, step) ? await validate(ctx, ctx.valTasks, step, timer) : null;
  const checkpoint =
    due(c.schedule.saveEvery, step) || step + 1 === c.schedule.steps ? await save(ctx, step, timer) : null;
  const timings = timer.end();
  return {
    checkpoint,
    metrics: {
      version,
      ...batchMetrics(prepared, valReward),
      ...(fresh ? asyncMetrics(fresh, inFlight) : {}),
      ...judged.metrics,
      ...distilled,
      ...update.metrics,
      ...served,
      ...timings,
    },
  };
}

/** Whether a step's every-`every` work (validation, a checkpoint) is due after it; 0: never. */
function due(every: number, step: number): boolean {
  return every > 0 && (step + 1) % every === 0;
}

/** The step's B tasks × n rollouts, all run to the end (no async pool). */
function stepRollouts(ctx: StepContext, step: number): Promise<string[]> {
  const c = ctx.config;
  return runRollouts(
    ctx,
    rolloutBatch(ctx, join(ctx.runDir, 'rollouts', `step-${step}`)),
    tasksForStep(ctx.tasks, c.batch.size, step, c.seed).flatMap((t) =>
      groupJobs(ctx.args, t, c.rollouts.n, `${ctx.run}/step${step}${ctx.attempt}/${t.id}`),
    ),
  );
}

/** One rollout of each validation task with the new weights: their mean reward (null: no tasks). */
async function validate(ctx: StepContext, valTasks: Task[], step: number, timer: PhaseTimer): Promise<number | null> {
  timer.start('validation');
  const valIds = await runRollouts(
    ctx,
    { ...rolloutBatch(ctx, join(ctx.runDir, 'rollouts', `val-${step}`)), mode: 'val' },
    valTasks.flatMap((t) => groupJobs(ctx.args, t, 1, `${ctx.run}/val${step}${ctx.attempt}/${t.id}`)),
  );
  await scoreRollouts(ctx.store, ctx.scoring, valIds);
  return mean(ctx.store.rolloutSummaries({ ids: valIds }).map((r) => r.reward ?? 0));
}

/** The worker's checkpoint of the step: its path. */
async function save(ctx: StepContext, step: number, timer: PhaseTimer): Promise<string> {
  timer.start('save');
  const path = join(ctx.runDir, 'checkpoints', `step-${step}`);
  return (await ctx.worker.call('save', { path }, ctx.config.worker.timeoutS * 1000)).path;
}

/** The step's rewards and its batch's counts, as metrics. */
function batchMetrics(
  { rollouts, rewards, built }: Awaited<ReturnType<typeof prepareBatch>>,
  valReward: number | null,
) {
  const m = built.metrics;
  return {
    reward_mean: mean(rewards),
    reward_std: sampleStd(rewards),
    pass_rate: mean(rewards.map((r) => (r >= 1 ? 1 : 0))),
    val_reward: valReward,
    rollouts: rollouts.length,
    rollouts_failed: rollouts.filter((r) => r.state !== 'succeeded').length,
    rows: m.rows,
    tokens: m.tokens,
    loss_tokens: m.loss_tokens,
    merge_breaks: built.merge.breaks,
    skipped_error_calls: built.merge.skipped_error_calls,
    dropped_missing_reward: m.dropped_missing_reward,
    dropped_zero_variance: m.dropped_zero_variance,
    dropped_overlong: m.dropped_overlong,
    dropped_long_prompt_rows: m.dropped_long_prompt_rows,
    dropped_alignment_rows: m.dropped_alignment_rows,
    truncated_rows: m.truncated_rows,
  };
}

/** What async rollouts add: the harnesses still running at the drain, and the groups' staleness. */
function asyncMetrics(fresh: Awaited<ReturnType<typeof freshGroups>>, inFlight: number) {
  return {
    in_flight_rollouts: inFlight,
    dropped_stale_groups: fresh.dropped,
    staleness_mean: fresh.stalenessMean,
    staleness_max: fresh.stalenessMax,
  };
}

/**
 * The orchestrator's work between the last harness and the update: the step's rollouts, the ones to train on, and
 * their batch file (merge, advantages, loss weights, the teacher's signal with `distil`, write). Throws when there is
 * nothing to train on.
 */
export async function prepareBatch(
  store: Store,
  ids: string[],
  c: TrainConfig,
  out: string,
  step: number,
  distil?: (tensors: BatchTensors) => Promise<void>,
) {
  const rollouts = store.rolloutSummaries({ ids });
  const rewards = rollouts.map((r) => r.reward ?? 0);
  const trained = trainable(rollouts, c.rollouts.failed);
  if (trained.length === 0) {
    const first = rollouts.find((r) => r.error)?.error ?? 'unknown';
    throw new AlightError(
      `every rollout of step ${step} failed (the first: ${first}); see the ` +
        `harness logs in ${join(out, '..', '..', 'rollouts', `step-${step}`)}`,
      ExitCode.failure,
    );
  }
  mkdirSync(join(out, '..'), { recursive: true });
  const { rollouts: kept, options } = distil ? forDistillation(trained, c) : { rollouts: trained, options: c.batch };
  const built = await buildStepBatch(store, kept, { ...options, out }, `step ${step}`, distil);
  return { rollouts, rewards, built };
}

/**
 * Under distillation a group whose rewards are all equal still carries the teacher's signal (it is not dropped); with
 * the task reward off every reward counts as 0, so the advantages are the teacher's alone.
 */
function forDistillation(trained: RolloutSummary[], c: TrainConfig) {
  const options = { ...c.batch, dropZeroVariance: c.batch.dropZeroVariance && c.distill.coef === 0 };
  return { rollouts: c.distill.taskReward ? trained : trained.map((r) => ({ ...r, reward: 0 })), options };
}

/** The step's scoring by the teacher, timed as its own phase; its metrics go to `done`. */
function distiller(
  teacher: ScoringEngine,
  { coef, concurrency, timeoutS }: TrainConfig['distill'],
  timer: PhaseTimer,
  done: (m: DistillMetrics) => void,
) {
  return async (tensors: BatchTensors): Promise<void> => {
    timer.start('teacher');
    done(await distilBatch(tensors, teacher, { coef, concurrency, timeoutMs: timeoutS * 1000 }));
  };
}

/** The pool of async rollouts for a run from `fromStep` on, its harnesses stopped by `signal`. */
export function groupPool(ctx: StepContext, fromStep: number, signal: AbortSignal): GroupPool {
  const c = ctx.config;
  const pool = new GroupPool({
    tasks: ctx.tasks,
    n: c.rollouts.n,
    seed: c.seed,
    inFlight: c.rollouts.asyncGroups,
    start: fromStep * c.batch.size,
    // Groups run side by side: one limit of train.rollouts.concurrency harnesses across them.
    session: { ...ctx, signal },
    batch: {
      ...rolloutBatch(ctx, join(ctx.runDir, 'rollouts', 'async')),
      concurrency: c.rollouts.n,
      slots: new Slots(c.rollouts.concurrency),
    },
    jobs: (task, groupId) => groupJobs(ctx.args, task, c.rollouts.n, groupId),
    groupId: (position, task) => `${ctx.run}/g${position}${ctx.attempt}/${task.id}`,
  });
  pool.fill();
  return pool;
}

/**
 * The first B groups to complete that are fresh enough: a group's staleness is how many versions its oldest served
 * call is behind the weights being updated (`step`). A group past `maxStaleness` is dropped (counted) and the pool
 * started again for another (new groups are served by the current weights, so this ends).
 */
async function freshGroups(ctx: StepContext, pool: GroupPool, step: number) {
  const c = ctx.config;
  const kept: DoneGroup[] = [];
  const staleness: number[] = [];
  let dropped = 0;
  while (kept.length < c.batch.size) {
    const groups = await pool.take(c.batch.size - kept.length, ctx.signal);
    const versions = new Map(
      ctx.store.rolloutSummaries({ ids: groups.flatMap((g) => g.ids) }).map((r) => [r.id, r.min_version]),
    );
    for (const g of groups) {
      const s = step - Math.min(step, ...g.ids.map((id) => versions.get(id) ?? step));
      if (s > c.rollouts.maxStaleness) dropped++;
      else {
        kept.push(g);
        staleness.push(s);
      }
    }
    if (kept.length < c.batch.size) pool.fill();
  }
  return {
    ids: kept.flatMap((g) => g.ids),
    dropped,
    stalenessMean: mean(staleness),
    stalenessMax: Math.max(...staleness),
  };
}

function rolloutBatch(ctx: StepContext, logDir: string): RolloutBatch {
  mkdirSync(logDir, { recursive: true });
  return {
    mode: 'train',
    command: ctx.command,
    timeoutMs: ctx.config.rollouts.timeoutS * 1000,
    rewardCmd: ctx.config.rollouts.rewardCmd,
    concurrency: ctx.config.rollouts.concurrency,
    logDir,
    groupDeadlineMs: ctx.scoring.groupDeadlineMs,
  };
}

/**
 * The rollouts the batch is built from: succeeded ones, and failed ones at reward 0 when the config says so, but never
 * one the infrastructure failed (an image that did not pull says nothing of the policy).
 */
function trainable(rollouts: RolloutSummary[], failed: TrainConfig['rollouts']['failed']): RolloutSummary[] {
  return rollouts.flatMap((r) =>
    r.state === 'succeeded' ? [r] : failed === 'zero' && !isInfraFailure(r.error) ? [{ ...r, reward: 0 }] : [],
  );
}

type PhaseTimer = ReturnType<typeof phaseTimer>;

/** Seconds per phase (`<phase>_s`), announced as each begins. */
function phaseTimer(ctx: StepContext, step: number) {
  const timings: Record<string, number> = {};
  const began = performance.now();
  let current: { phase: string; at: number } | null = null;
  const close = (): void => {
    if (current) timings[`${current.phase}_s`] = (performance.now() - current.at) / 1000;
  };
  return {
    start(phase: string): void {
      close();
      current = { phase, at: performance.now() };
      ctx.onEvent({ type: 'phase', step, phase });
    },
    end(): Record<string, number> {
      close();
      timings.step_s = (performance.now() - began) / 1000;
      return timings;
    },
  };
}
