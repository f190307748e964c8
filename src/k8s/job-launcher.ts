import type { V1Job, V1Pod } from '@kubernetes/client-node';
import type { Config, K8sConfig } from '../config/schema.js';
import { AlightError, errorMessage } from '../errors.js';
import type { RunLauncher } from '../runner/launcher.js';
import { abortReason, type ProcessResult, type ProcessSpec } from '../runner/launcher.js';
import { rewardFrom } from '../runner/reward.js';
import { substitute } from '../runner/template.js';
import { advertiseHost } from './advertise.js';
import { apiMessage, type Cluster, connect, rateLimiter, statusOf, withRetries } from './cluster.js';
import { buildJob, harnessIndex, label } from './job-spec.js';
import { fillTemplate, loadJobTemplate } from './job-template.js';
import { Mirror } from './mirror.js';
import { judge, type Outcome } from './outcome.js';
import { PodLogs } from './pod-logs.js';
import { deleteJob, openSession, reapOrphans, type Session } from './session.js';

export interface K8sLauncher extends RunLauncher {
  readonly cluster: Cluster;
}

// A Job the controller has not ended this long after its deadline is ended by alight.
const deadlineSlackMs = 30_000;

/**
 * Rollouts as Kubernetes Jobs: one Job per rollout in the harness's image, watched (with its pod) until it ends, its
 * output streamed into the rollout's log files, deleted once done. Starting one first deletes what killed alights left
 * behind (their heartbeat stopped), then opens this process's session.
 */
export async function startK8sLauncher(
  config: Config,
  onProblem: (message: string) => void = () => {},
): Promise<K8sLauncher> {
  const settings = config.k8s;
  const cluster = connect(settings);
  const template = settings.template ? loadJobTemplate(settings.template) : null;
  try {
    const reaped = await reapOrphans(cluster);
    if (reaped > 0) onProblem(`deleted ${reaped} Job(s) left by an alight that stopped without cleaning up`);
  } catch (err) {
    throw new AlightError(
      `cannot reach the Kubernetes API at ${cluster.server} (namespace ${cluster.namespace}): ${apiMessage(err)}`,
    );
  }
  const gatewayHost = config.gateway.advertise ?? (await advertiseHost(cluster.server));
  const session = await openSession(cluster, settings.leaseS, onProblem);
  const watch = await watchSession(cluster, session.id, onProblem);
  const limit = rateLimiter(settings.createPerS);
  const run = (spec: ProcessSpec): Promise<ProcessResult> =>
    runJob({ cluster, settings, template, session, watch, limit }, spec);
  return {
    name: 'k8s',
    cluster,
    gatewayHost,
    infraRetries: settings.retryInfra,
    run,
    async close() {
      watch.stop();
      const left = await session.end();
      if (left > 0)
        onProblem(`${left} Job(s) were still being deleted when alight stopped waiting (ttl ${settings.ttlS} s)`);
    },
  };
}

interface Ctx {
  cluster: Cluster;
  settings: K8sConfig;
  template: V1Job | null;
  session: Session;
  watch: SessionWatch;
  limit: () => Promise<void>;
}

async function runJob(ctx: Ctx, spec: ProcessSpec): Promise<ProcessResult> {
  const { cluster } = ctx;
  let body: V1Job;
  try {
    body = jobFor(ctx, spec);
  } catch (err) {
    // A task without the field the image or the template names: this rollout's failure, not the run's.
    return { exitCode: null, reason: errorMessage(err) };
  }
  const name = body.metadata!.name!;
  const container = body.spec!.template.spec!.containers[harnessIndex(body.spec!.template.spec!.containers)].name;
  await ctx.limit();
  const stopped = (): ProcessResult => ({ exitCode: null, reason: abortReason(spec.signal) });
  if (spec.signal.aborted) return stopped();
  try {
    await withRetries(() => cluster.batch.createNamespacedJob({ namespace: cluster.namespace, body }), 6, spec.signal);
  } catch (err) {
    // 409: a retried create whose first try did land (the name is the rollout's own): that Job is this rollout's.
    if (statusOf(err) !== 409) {
      // A try that failed may still have landed: no Job of a failed create is left running.
      void deleteJob(cluster, name).catch(() => {});
      return spec.signal.aborted ? stopped() : createFailed(name, err);
    }
  }
  const logs = new PodLogs(cluster, spec.output);
  const ended = await follow(ctx, name, container, spec, logs);
  const pod = ctx.watch.pod(name);
  await logs.finish(pod?.metadata?.name ?? null, container, notes(name, pod, ended));
  await deleteJob(cluster, name).catch(() => {});
  if (ended.reason !== null || !spec.rewardCmd) return ended;
  return { ...ended, reward: rewardFrom(ended.message ?? '', 'its termination message had none') };
}

/** The rollout's Job: the template filled for its task, the image named by the task if the setting says so. */
function jobFor(ctx: Ctx, spec: ProcessSpec): V1Job {
  const { cluster, settings } = ctx;
  if (!spec.rollout) throw new Error('the Kubernetes launcher runs rollouts only');
  const task = spec.rollout.task ?? {};
  return buildJob({
    namespace: cluster.namespace,
    rolloutId: spec.rollout.id,
    run: spec.rollout.run,
    taskId: spec.rollout.taskId,
    session: ctx.session.id,
    owner: ctx.session.owner,
    image: spec.image ?? (settings.image ? substitute(settings.image, task, 'the image') : undefined),
    command: spec.command,
    args: spec.args,
    env: { ...settings.env, ...spec.env },
    rewardCmd: spec.rewardCmd,
    deadlineS: spec.timeoutMs === null ? null : Math.ceil(spec.timeoutMs / 1000),
    settings,
    template: ctx.template ? fillTemplate(ctx.template, task) : null,
  });
}

/** A Job the API server would not create: the cluster's fault (no answer, 5xx, a full quota) or the spec's. */
function createFailed(name: string, err: unknown): ProcessResult {
  const status = statusOf(err);
  const quota = status === 403 && /exceeded quota/i.test(apiMessage(err));
  return {
    exitCode: null,
    reason: `could not create the Job ${name}: ${apiMessage(err)}`,
    infra: status === 0 || status >= 500 || quota,
  };
}

/** Waits for the Job to end (or the abort, or alight's own deadline), following the pod's output once it runs. */
function follow(ctx: Ctx, name: string, container: string, spec: ProcessSpec, logs: PodLogs): Promise<Outcome> {
  const deadline = spec.timeoutMs === null ? null : Date.now() + spec.timeoutMs + deadlineSlackMs;
  const seen: { job: boolean; pod: V1Pod | undefined } = { job: false, pod: undefined };
  const created = Date.now();
  const pendingMs = ctx.settings.pendingS * 1000;
  const evaluate = (): Outcome | null => {
    const job = ctx.watch.job(name);
    const pod = podOf(ctx.watch.pod(name), seen);
    if (pod && started(pod, container)) logs.start(pod.metadata!.name!, container);
    if (job) seen.job = true;
    else if (seen.job) return lost('the Job was deleted before it ended (by someone else, or its namespace went)');
    // The watch and its periodic list both missed it: deleted at once (its owner Lease gone?).
    else if (Date.now() - created > pendingMs) return lost('the Job was gone before alight saw it');
    const outcome = job ? judge(job, pod, container, Date.now(), pendingMs) : null;
    if (outcome) return outcome;
    if (deadline !== null && Date.now() > deadline)
      return { exitCode: null, reason: 'timeout', infra: false, message: null };
    return null;
  };
  return new Promise((resolve) => {
    const finish = (o: Outcome): void => {
      clearInterval(tick);
      unsubscribe();
      spec.signal.removeEventListener('abort', abort);
      resolve(o);
    };
    const check = (): void => {
      const outcome = evaluate();
      if (outcome) finish(outcome);
    };
    const abort = (): void => {
      logs.stop();
      finish({ exitCode: null, reason: abortReason(spec.signal), infra: false, message: null });
    };
    const unsubscribe = ctx.watch.subscribe(name, check);
    // The pending limit and alight's deadline are times, not changes: looked at every second too.
    const tick = setInterval(check, 1000);
    spec.signal.addEventListener('abort', abort, { once: true });
    if (spec.signal.aborted) abort();
    else check();
  });
}

/**
 * The pod as last seen: one that went from the watch is kept, marked deleted then (judge gives a deletion time to let
 * the Job's own reason, say its deadline, arrive first).
 */
function podOf(current: V1Pod | undefined, seen: { pod: V1Pod | undefined }): V1Pod | undefined {
  if (current) seen.pod = current;
  else if (seen.pod && !seen.pod.metadata?.deletionTimestamp)
    seen.pod = { ...seen.pod, metadata: { ...seen.pod.metadata, deletionTimestamp: new Date() } };
  return seen.pod;
}

const lost = (reason: string): Outcome => ({ exitCode: null, reason, infra: true, message: null });

function started(pod: V1Pod, container: string): boolean {
  const state = pod.status?.containerStatuses?.find((c) => c.name === container)?.state;
  return Boolean(state?.running || state?.terminated);
}

/** What the stderr log says about the pod: where it ran and how it ended. */
function notes(job: string, pod: V1Pod | undefined, ended: Outcome): string[] {
  const where = pod ? `pod ${pod.metadata?.name} on ${pod.spec?.nodeName ?? 'no node'}` : 'no pod';
  const how = ended.reason ?? `the harness exited with code ${ended.exitCode}`;
  return [`Job ${job}, ${where}: ${how}${ended.infra ? " (the infrastructure's failure)" : ''}`];
}

interface SessionWatch {
  job(name: string): V1Job | undefined;
  pod(jobName: string): V1Pod | undefined;
  subscribe(name: string, onChange: () => void): () => void;
  stop(): void;
}

/** The session's Jobs and pods, mirrored; a change to either calls the Job's subscriber. */
async function watchSession(cluster: Cluster, session: string, onProblem: (m: string) => void): Promise<SessionWatch> {
  const { namespace, kc } = cluster;
  const labelSelector = `${label.session}=${session}`;
  const subscribers = new Map<string, () => void>();
  const changed = (key: string): void => subscribers.get(key)?.();
  const jobs = new Mirror<V1Job>(
    kc,
    `/apis/batch/v1/namespaces/${namespace}/jobs`,
    labelSelector,
    () => cluster.batch.listNamespacedJob({ namespace, labelSelector }),
    (j) => j.metadata?.name,
    changed,
    15_000,
    onProblem,
  );
  const pods = new Mirror<V1Pod>(
    kc,
    `/api/v1/namespaces/${namespace}/pods`,
    labelSelector,
    () => cluster.core.listNamespacedPod({ namespace, labelSelector }),
    (p) => p.metadata?.labels?.['batch.kubernetes.io/job-name'] ?? p.metadata?.labels?.['job-name'],
    changed,
    15_000,
    onProblem,
  );
  await Promise.all([jobs.start(), pods.start()]);
  return {
    job: (name) => jobs.objects.get(name),
    pod: (name) => pods.objects.get(name),
    subscribe(name, onChange) {
      subscribers.set(name, onChange);
      return () => subscribers.delete(name);
    },
    stop() {
      jobs.stop();
      pods.stop();
    },
  };
}
