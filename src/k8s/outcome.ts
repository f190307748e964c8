import type { V1Job, V1Pod } from '@kubernetes/client-node';

/** How a rollout's Job ended, read from the Job and its pod. */
export interface Outcome {
  /** The harness container's exit code, when it ran and exited. */
  exitCode: number | null;
  /** Why it ended other than by exiting (`timeout`, `OOMKilled …`, `ImagePullBackOff …`); null: it exited. */
  reason: string | null;
  /** The cluster's fault, not the harness's: retried (`k8s.retryInfra`), never trained on. */
  infra: boolean;
  /** The harness container's termination message (the reward command's output). */
  message: string | null;
}

const cannotRun = new Set(['StartError', 'ContainerCannotRun']);
// The image will not come: no sense waiting for the pending limit.
const hopelessImage = new Set(['InvalidImageName', 'ErrImageNeverPull']);
// Perhaps a registry hiccup: fatal once the pod has been pending for the limit.
const pullErrors = new Set(['ErrImagePull', 'ImagePullBackOff']);
// The user's spec (a missing Secret or ConfigMap): also fatal at the limit, but not the cluster's fault.
const configErrors = new Set(['CreateContainerConfigError', 'CreateContainerError', 'RunContainerError']);

/**
 * The outcome of a rollout's Job, or null while it is still going. `pendingMs`: how long a pod may stay unschedulable
 * or without its image; `container`: the harness's container name. Pure: the watcher calls it on every change.
 */
export function judge(
  job: V1Job,
  pod: V1Pod | undefined,
  container: string,
  now: number,
  pendingMs: number,
): Outcome | null {
  const conditions = job.status?.conditions ?? [];
  const failed = conditions.find((c) => (c.type === 'Failed' || c.type === 'FailureTarget') && c.status === 'True');
  if (failed?.reason === 'DeadlineExceeded') return end(null, 'timeout');
  if (job.metadata?.deletionTimestamp)
    return end(null, 'the Job is being deleted (by someone else, or its namespace)', true);
  const lost = podLost(pod, now);
  if (lost) return end(null, lost, true);
  const done = pod?.status?.containerStatuses?.find((c) => c.name === container)?.state?.terminated;
  if (done) return ended(done);
  const created = pod?.metadata?.creationTimestamp ?? job.metadata?.creationTimestamp;
  const overdue = now - (created ? new Date(created).getTime() : now) >= pendingMs;
  const pending = pendingProblem(pod, container, overdue);
  if (pending) return pending;
  if (!pod && overdue)
    return end(
      null,
      `no pod after ${pendingMs / 1000} s: the cluster would not make one (a quota, an admission policy?)`,
    );
  const last = conditions.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
  // The Job's end can come before its pod's last status (the exit code, the termination message): wait for it a while.
  if (!last || (pod && now - new Date(last.lastTransitionTime ?? 0).getTime() < podStatusWaitMs)) return null;
  if (last.type === 'Complete') return end(0, null);
  return end(null, `the Job failed: ${last.reason ?? ''} ${last.message ?? ''}`.trim());
}

const podStatusWaitMs = 10_000;

/** The harness container's end: its exit code, or why the runtime could not run it. */
function ended(done: { exitCode: number; reason?: string; message?: string }): Outcome {
  if (done.reason === 'OOMKilled') return end(done.exitCode, 'OOMKilled (the container went over its memory limit)');
  // The runtime could not start the command (not in the image, a mount that failed): its words, not an exit code.
  if (done.reason && cannotRun.has(done.reason))
    return end(done.exitCode, `${done.reason}: ${done.message ?? ''}`.trim());
  return end(done.exitCode, null, false, done.message ?? null);
}

/** A pod still waiting whose wait is hopeless, or has gone on for the pending limit. */
function pendingProblem(pod: V1Pod | undefined, container: string, overdue: boolean): Outcome | null {
  const waiting = pod?.status?.containerStatuses?.find((c) => c.name === container)?.state?.waiting;
  if (waiting?.reason && (hopelessImage.has(waiting.reason) || (pullErrors.has(waiting.reason) && overdue)))
    return end(null, waitingReason(waiting), true);
  if (waiting?.reason && configErrors.has(waiting.reason) && overdue) return end(null, waitingReason(waiting));
  const scheduled = pod?.status?.conditions?.find((c) => c.type === 'PodScheduled');
  if (scheduled?.status === 'False' && scheduled.reason === 'Unschedulable' && overdue)
    return end(null, `Unschedulable: ${scheduled.message ?? 'no node fits'}`, true);
  return null;
}

/** Why the pod died under its harness (evicted, preempted, its node gone, deleted), or null. */
function podLost(pod: V1Pod | undefined, now: number): string | null {
  const disrupted = pod?.status?.conditions?.find((c) => c.type === 'DisruptionTarget' && c.status === 'True');
  if (disrupted) return `${disrupted.reason ?? 'disrupted'}: ${disrupted.message ?? 'no message'}`;
  if (pod?.status?.phase === 'Failed' && pod.status.reason && pod.status.reason !== 'DeadlineExceeded')
    return `${pod.status.reason}: ${pod.status.message ?? 'no message'}`;
  // alight deletes a Job only once its rollout ended: a pod going before that was deleted by someone else, unless the
  // Job's own reason (its deadline: the Job controller deletes its pods) comes within a while.
  const deleted = pod?.metadata?.deletionTimestamp;
  if (deleted && now - new Date(deleted).getTime() >= podStatusWaitMs)
    return 'the pod was deleted before its harness ended (by someone else, or with its node)';
  return null;
}

function waitingReason(w: { reason?: string; message?: string }): string {
  return `${w.reason}${w.message ? `: ${w.message}` : ''}`;
}

function end(
  exitCode: number | null | undefined,
  reason: string | null,
  infra = false,
  message: string | null = null,
): Outcome {
  return { exitCode: exitCode ?? null, reason, infra, message };
}
