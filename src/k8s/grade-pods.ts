import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { NetworkingV1Api, type V1Job, type V1NetworkPolicy } from '@kubernetes/client-node';
import type { K8sConfig } from '../config/schema.js';
import { AlightError } from '../errors.js';
import { apiMessage, type Cluster, connect, rateLimiter, withRetries } from './cluster.js';
import { buildJob, label } from './job-spec.js';
import { judge } from './outcome.js';
import { type ExecIo, type ExecResult, execIn } from './pod-exec.js';
import { deleteJob, openSession, reapOrphans, type Session } from './session.js';

/** A grading pod: a fresh pod of an instance's image, idle until alight execs the grade's steps in it. */
export interface GradePod {
  exec(command: string[], io?: ExecIo): Promise<ExecResult>;
  delete(): Promise<void>;
}

/** This process's grading pods on Kubernetes, under one session (the runner's Lease: killed alights are cleaned up). */
export interface GradePods {
  open(image: string, instanceId: string, deadlineS: number): Promise<GradePod>;
  close(): Promise<void>;
}

const role = 'alight.dev/role';
const container = 'harness';
// The one address every pod is given (even without service links): whether a grading pod reaches it tells whether the
// cluster enforces the deny-all policy.
const probe =
  'timeout 3 bash -c \'exec 3<>"/dev/tcp/$KUBERNETES_SERVICE_HOST/$KUBERNETES_SERVICE_PORT"\' 2>/dev/null; echo $?';

/**
 * Opens the session and its deny-all NetworkPolicy (ingress and egress, owned by the session's Lease so it goes with
 * it); `onProblem` hears once if a pod still reaches the network, which means the cluster does not enforce policies.
 */
export async function openGradePods(settings: K8sConfig, onProblem: (message: string) => void): Promise<GradePods> {
  const cluster = connect(settings);
  try {
    await reapOrphans(cluster);
  } catch (err) {
    throw new AlightError(`cannot reach the Kubernetes API at ${cluster.server}: ${apiMessage(err)}`);
  }
  const session = await openSession(cluster, settings.leaseS, onProblem);
  try {
    await denyAll(cluster, session);
  } catch (err) {
    await session.end();
    throw new AlightError(
      `cannot create the grading pods' deny-all NetworkPolicy in ${cluster.namespace}: ${apiMessage(err)} ` +
        '(the grader needs create on networkpolicies and on pods/exec: alight doctor --runner k8s prints the Role)',
    );
  }
  const limit = rateLimiter(settings.createPerS);
  let warned = false;
  const warnOpen = (): void => {
    if (warned) return;
    warned = true;
    onProblem(
      `a grading pod reached the API server's address through its deny-all NetworkPolicy: this cluster does not ` +
        'enforce NetworkPolicy, so the tests ran with the network on',
    );
  };
  return {
    async open(image, instanceId, deadlineS) {
      await limit();
      const pod = await startPod({ cluster, settings, session }, image, instanceId, deadlineS);
      const out = new PassThrough();
      let said = '';
      out.on('data', (d) => (said += d));
      await pod.exec(['sh', '-c', probe], { stdout: out, timeoutMs: 10_000 });
      if (said.trim() === '0') warnOpen();
      return pod;
    },
    async close() {
      await session.end();
    },
  };
}

async function denyAll(cluster: Cluster, session: Session): Promise<void> {
  const body: V1NetworkPolicy = {
    metadata: { name: `alight-grade-${session.id}`, ownerReferences: [session.owner] },
    spec: {
      podSelector: { matchLabels: { [role]: 'grader', [label.session]: session.id } },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [],
      egress: [],
    },
  };
  const api = cluster.kc.makeApiClient(NetworkingV1Api);
  await withRetries(() => api.createNamespacedNetworkPolicy({ namespace: cluster.namespace, body }));
}

interface Ctx {
  cluster: Cluster;
  settings: K8sConfig;
  session: Session;
}

/** A Job whose pod sleeps out the grade's deadline in the image; resolves once it runs, throws why it will not. */
async function startPod(ctx: Ctx, image: string, instanceId: string, deadlineS: number): Promise<GradePod> {
  const { cluster, settings, session } = ctx;
  const body: V1Job = buildJob({
    namespace: cluster.namespace,
    rolloutId: `grade-${randomBytes(5).toString('hex')}`,
    run: 'grade',
    taskId: instanceId,
    session: session.id,
    owner: session.owner,
    image,
    command: 'sleep',
    args: [String(deadlineS)],
    env: {},
    deadlineS,
    // No service account, whatever the runner's: the code under test gets no credential at all.
    settings: { ...settings, serviceAccount: undefined },
    template: null,
  });
  body.spec!.template.metadata!.labels![role] = 'grader';
  body.spec!.template.spec!.terminationGracePeriodSeconds = 0;
  const name = body.metadata!.name!;
  await withRetries(() => cluster.batch.createNamespacedJob({ namespace: cluster.namespace, body }));
  const gone = (): Promise<void> => deleteJob(cluster, name).catch(() => {});
  try {
    const pod = await running(cluster, name, settings.pendingS * 1000);
    return { exec: (command, io) => execIn(cluster, pod, container, command, io), delete: gone };
  } catch (err) {
    await gone();
    throw err;
  }
}

/** The Job's pod, once its container runs: the pod's name; the reason it will not run (judge's) as an error. */
async function running(cluster: Cluster, job: string, pendingMs: number): Promise<string> {
  const { namespace } = cluster;
  for (;;) {
    const [j, pods] = await Promise.all([
      withRetries(() => cluster.batch.readNamespacedJob({ namespace, name: job })),
      withRetries(() =>
        cluster.core.listNamespacedPod({ namespace, labelSelector: `batch.kubernetes.io/job-name=${job}` }),
      ),
    ]);
    const pod = pods.items[0];
    if (pod?.status?.containerStatuses?.find((c) => c.name === container)?.state?.running) return pod.metadata!.name!;
    const ended = judge(j, pod, container, Date.now(), pendingMs);
    if (ended) throw new Error(`the grading pod did not run: ${ended.reason ?? `it exited with ${ended.exitCode}`}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
