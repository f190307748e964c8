import type { V1Container, V1Job, V1OwnerReference } from '@kubernetes/client-node';
import type { K8sConfig } from '../config/schema.js';
import { AlightError, ExitCode } from '../errors.js';

export const managedBy = { 'app.kubernetes.io/managed-by': 'alight' } as const;
export const label = {
  run: 'alight.dev/run',
  rollout: 'alight.dev/rollout',
  task: 'alight.dev/task',
  session: 'alight.dev/session',
} as const;

/** Everything one rollout's Job is made of. */
export interface JobPlan {
  namespace: string;
  rolloutId: string;
  run: string;
  taskId: string | null;
  /** The alight process that owns the Job (its Lease): another alight deletes the Job once that heartbeat stops. */
  session: string;
  owner: V1OwnerReference | null;
  /** The image (placeholders filled); default: the template's. */
  image?: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Runs in the same container after the harness; its output becomes the termination message. */
  rewardCmd?: string;
  deadlineS: number | null;
  settings: K8sConfig;
  /** The user's template, filled for this task. */
  template: V1Job | null;
}

const stopGraceS = 3;

/** A Kubernetes name for a rollout's Job (rollout ids are `ro_` and hex). */
export function jobName(rolloutId: string): string {
  return `alight-${rolloutId.toLowerCase().replace(/[^a-z0-9-]/g, '-')}`;
}

/** A label value: at most 63 of [A-Za-z0-9._-], alphanumeric at both ends (the full value goes in an annotation). */
export function labelValue(value: string): string {
  return value
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .slice(0, 63)
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
}

// The harness runs, then the reward command; the last 4 KiB of the reward's output is the container's termination
// message (kubelet keeps the file's tail), which alight reads from the pod's status: no HTTP client needed in the image.
const rewardWrapper =
  '"$@"; rc=$?; out=$(sh -c "$ALIGHT_REWARD_CMD"); printf \'%s\\n\' "$out"; ' +
  'printf \'%s\' "$out" > /dev/termination-log; exit $rc';

/**
 * The Job for one rollout: the template's (or a bare) Job with alight's fields set on top of it: name, labels, owner,
 * one attempt, no restarts, the deadline, the TTL, the harness's image, command and environment. The pod gets no
 * service-account token unless a service account is named: the rollout's token is the only credential it holds.
 */
export function buildJob(plan: JobPlan): V1Job {
  const base: V1Job = plan.template ?? {
    apiVersion: 'batch/v1',
    kind: 'Job',
    spec: { template: { spec: { containers: [{ name: 'harness' }] } } },
  };
  const s = plan.settings;
  const labels = {
    ...managedBy,
    [label.run]: labelValue(plan.run),
    [label.rollout]: labelValue(plan.rolloutId),
    [label.session]: plan.session,
    ...(plan.taskId ? { [label.task]: labelValue(plan.taskId) } : {}),
  };
  const pod = base.spec!.template.spec!;
  const containers = pod.containers.map((c, i) => (i === harnessIndex(pod.containers) ? harnessContainer(c, plan) : c));
  const serviceAccount = s.serviceAccount ?? pod.serviceAccountName;
  return {
    ...base,
    metadata: {
      ...base.metadata,
      name: jobName(plan.rolloutId),
      namespace: plan.namespace,
      labels: { ...base.metadata?.labels, ...labels },
      annotations: { ...base.metadata?.annotations, [label.run]: plan.run, [label.task]: plan.taskId ?? '' },
      ownerReferences: plan.owner ? [plan.owner] : undefined,
    },
    spec: {
      ...base.spec,
      backoffLimit: 0,
      ttlSecondsAfterFinished: s.ttlS,
      activeDeadlineSeconds: plan.deadlineS ?? base.spec?.activeDeadlineSeconds,
      template: {
        metadata: { ...base.spec!.template.metadata, labels: { ...base.spec!.template.metadata?.labels, ...labels } },
        spec: {
          ...pod,
          restartPolicy: 'Never',
          containers,
          serviceAccountName: serviceAccount,
          automountServiceAccountToken: pod.automountServiceAccountToken ?? (serviceAccount ? undefined : false),
          enableServiceLinks: pod.enableServiceLinks ?? false,
          // A harness stopped (Ctrl-C, its deadline) gets what a local one gets, not Kubernetes' 30 s: as PID 1 it
          // ignores SIGTERM unless it handles it.
          terminationGracePeriodSeconds: pod.terminationGracePeriodSeconds ?? stopGraceS,
          nodeSelector: s.nodeSelector || pod.nodeSelector ? { ...pod.nodeSelector, ...s.nodeSelector } : undefined,
          tolerations: concat(pod.tolerations, s.tolerations),
          imagePullSecrets: concat(
            pod.imagePullSecrets,
            s.imagePullSecrets?.map((name) => ({ name })),
          ),
        },
      },
    },
  };
}

/** The container the harness runs in: the one named `harness`, else the first. */
export function harnessIndex(containers: V1Container[]): number {
  return Math.max(
    0,
    containers.findIndex((c) => c.name === 'harness'),
  );
}

function harnessContainer(c: V1Container, plan: JobPlan): V1Container {
  const image = plan.image ?? c.image;
  if (!image)
    throw new AlightError(
      'no image for the harness: pass --image (or k8s.image), or set one in the Job template',
      ExitCode.usage,
    );
  const env = { ...plan.env, ...(plan.rewardCmd ? { ALIGHT_REWARD_CMD: plan.rewardCmd } : {}) };
  const s = plan.settings;
  return {
    ...c,
    image,
    imagePullPolicy: s.imagePullPolicy ?? c.imagePullPolicy,
    command: plan.rewardCmd ? ['/bin/sh', '-c', rewardWrapper, 'alight-harness', plan.command] : [plan.command],
    args: plan.args,
    env: [
      ...(c.env ?? []).filter((e) => !(e.name in env)),
      ...Object.entries(env).map(([name, value]) => ({ name, value })),
    ],
    resources: s.resources ? { ...c.resources, ...s.resources } : c.resources,
    // The reward wrapper writes here, whatever the template says.
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
  };
}

function concat<T>(a: T[] | undefined, b: T[] | undefined): T[] | undefined {
  return a || b ? [...(a ?? []), ...(b ?? [])] : undefined;
}
