import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AuthenticationV1Api, VersionApi } from '@kubernetes/client-node';
import type { Config } from '../config/schema.js';
import type { Check } from '../doctor/upstream.js';
import { errorMessage } from '../errors.js';
import { advertiseHost } from './advertise.js';
import { apiMessage, type Cluster, connect, statusOf } from './cluster.js';
import { buildJob, harnessIndex } from './job-spec.js';
import { loadJobTemplate } from './job-template.js';
import { judge, type Outcome } from './outcome.js';
import { deleteJob } from './session.js';

/** What the runner does in its namespace, as [group, resource, verbs]. The minimal Role below grants exactly these. */
export const needed: [string, string, string[]][] = [
  ['batch', 'jobs', ['create', 'get', 'list', 'watch', 'delete']],
  ['', 'pods', ['get', 'list', 'watch']],
  ['', 'pods/log', ['get']],
  ['coordination.k8s.io', 'leases', ['create', 'get', 'list', 'update', 'delete']],
];

/** What `--grader k8s` needs besides: commands in its pods, and their deny-all NetworkPolicy. */
export const graderNeeded: [string, string, string[]][] = [
  ['', 'pods/exec', ['create']],
  ['networking.k8s.io', 'networkpolicies', ['create']],
];

/** Who a Role is for: a service account (`system:serviceaccount:NS:NAME`) or a user. */
export function subjectOf(username: string | null, namespace: string): string {
  const sa = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(username ?? '');
  if (sa) return `{kind: ServiceAccount, name: ${sa[2]}, namespace: ${sa[1]}}`;
  if (username) return `{kind: User, name: ${JSON.stringify(username)}, apiGroup: rbac.authorization.k8s.io}`;
  return `{kind: ServiceAccount, name: alight, namespace: ${namespace}}`;
}

/** A Role and RoleBinding that let `subject` (subjectOf) run alight's Jobs in `namespace`. */
export function roleYaml(namespace: string, subject = subjectOf(null, namespace)): string {
  const rules = (list: typeof needed): string =>
    list
      .map(
        ([group, resource, verbs]) =>
          `  - apiGroups: ["${group}"]\n    resources: ["${resource}"]\n    verbs: [${verbs.map((v) => `"${v}"`).join(', ')}]`,
      )
      .join('\n');
  return `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: alight-runner, namespace: ${namespace}}
rules:
${rules(needed)}
  # eval --grader k8s only (leave these out otherwise):
${rules(graderNeeded)}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: alight-runner, namespace: ${namespace}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: alight-runner}
subjects:
  - ${subject}
`;
}

export interface K8sReport {
  context: string | null;
  /** Who the kubeconfig authenticates as. */
  user: string | null;
  server: string | null;
  namespace: string | null;
  checks: Check[];
  role: string;
}

/**
 * `alight doctor --runner k8s`: the kubeconfig and its context, the API server, the namespace, each permission the
 * runner needs (SelfSubjectAccessReview), and that a pod in the harness's image reaches this machine's gateway address.
 */
export async function checkCluster(config: Config): Promise<K8sReport> {
  let cluster: Cluster;
  try {
    cluster = connect(config.k8s);
  } catch (err) {
    const checks = [{ name: 'kubeconfig', ok: false, detail: errorMessage(err) }];
    const namespace = config.k8s.namespace ?? 'default';
    return { context: null, user: null, server: null, namespace: null, checks, role: roleYaml(namespace) };
  }
  const checks: Check[] = [
    { name: 'kubeconfig', ok: true, detail: `context ${cluster.context}, server ${cluster.server}` },
  ];
  const { context, server, namespace } = cluster;
  try {
    const version = await cluster.kc.makeApiClient(VersionApi).getCode();
    checks.push({ name: 'API server', ok: true, detail: `Kubernetes ${version.gitVersion}` });
  } catch (err) {
    checks.push({ name: 'API server', ok: false, detail: `unreachable: ${apiMessage(err)}` });
    return { context, user: null, server, namespace, checks, role: roleYaml(namespace) };
  }
  const user = await whoAmI(cluster);
  const report = { context, user, server, namespace, checks, role: roleYaml(namespace, subjectOf(user, namespace)) };
  checks.push(await namespaceCheck(cluster));
  checks.push(...(await permissionChecks(cluster)));
  if (checks.every((c) => c.ok !== false))
    checks.push(
      await reachCheck(cluster, config).catch((err) => ({
        name: 'a pod reaches the gateway',
        ok: false,
        detail: `could not try: ${apiMessage(err)}`,
      })),
    );
  return report;
}

/** The kubeconfig's identity (SelfSubjectReview), or null where the server will not say. */
async function whoAmI(cluster: Cluster): Promise<string | null> {
  try {
    const review = await cluster.kc.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({ body: {} });
    return review.status?.userInfo?.username ?? null;
  } catch {
    return null;
  }
}

async function namespaceCheck(cluster: Cluster): Promise<Check> {
  const name = `namespace ${cluster.namespace}`;
  try {
    await cluster.core.readNamespace({ name: cluster.namespace });
    return { name, ok: true, detail: 'exists' };
  } catch (err) {
    if (statusOf(err) === 404)
      return { name, ok: false, detail: `does not exist: kubectl create namespace ${cluster.namespace}` };
    // A namespaced Role need not let its holder read namespaces: not a problem for the runner.
    return { name, ok: null, detail: `cannot tell (${apiMessage(err)})` };
  }
}

async function permissionChecks(cluster: Cluster): Promise<Check[]> {
  const checks: Check[] = [];
  for (const [group, resource, verbs] of [...needed, ...graderNeeded]) {
    const graderOnly = graderNeeded.some(([, r]) => r === resource);
    const [res, subresource] = resource.split('/');
    const denied: string[] = [];
    for (const verb of verbs) {
      const attributes = { namespace: cluster.namespace, group, resource: res, subresource, verb };
      const review = await cluster.authz
        .createSelfSubjectAccessReview({ body: { spec: { resourceAttributes: attributes } } })
        .catch((err) => ({ status: { allowed: false, reason: `cannot ask: ${apiMessage(err)}` } }));
      if (!review.status?.allowed)
        denied.push(review.status?.reason?.startsWith('cannot ask') ? `${verb} (${review.status.reason})` : verb);
    }
    checks.push({
      name: `may ${verbs.join('/')} ${resource}`,
      // The grader's permissions warn: a user who grades elsewhere need not grant them.
      ok: denied.length === 0 ? true : graderOnly ? null : false,
      detail: denied.length
        ? `denied: ${denied.join(', ')} (${graderOnly ? 'needed only by eval --grader k8s; ' : ''}apply the Role below)`
        : 'allowed',
    });
  }
  return checks;
}

// Whichever HTTP client the image has: curl, wget, or Python.
const fetchScript =
  'curl -fsS "$0" || wget -qO- "$0" || ' +
  'python3 -c "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())" "$0"';

/**
 * A one-shot Job in the harness's image calls a listener bound where the gateway would be: it passes when the request
 * arrives here (whatever the pod prints).
 */
async function reachCheck(cluster: Cluster, config: Config): Promise<Check> {
  const name = 'a pod reaches the gateway';
  const template = config.k8s.template ? loadJobTemplate(config.k8s.template) : null;
  const containers = template?.spec?.template.spec?.containers ?? [];
  const image = config.k8s.image ?? containers[harnessIndex(containers)]?.image;
  // An image (or a template) that takes a task's field cannot be tried without a task.
  if (!image || JSON.stringify(template ?? '').includes('{{') || image.includes('{{'))
    return { name, ok: null, detail: 'not tried: pass --image with a fixed image (one with curl, wget or python3)' };
  const host = config.gateway.advertise ?? (await advertiseHost(cluster.server));
  const nonce = randomBytes(8).toString('hex');
  let reached = false;
  const server = createServer((req, res) => {
    if (req.url === `/healthz/${nonce}`) reached = true;
    res.end('ok\n');
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, host, resolve));
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${(server.address() as AddressInfo).port}/healthz/${nonce}`;
  const job = buildJob({
    namespace: cluster.namespace,
    rolloutId: `doctor-${nonce}`,
    run: 'doctor',
    taskId: null,
    session: '',
    owner: null,
    image,
    command: 'sh',
    args: ['-c', fetchScript, url],
    env: {},
    deadlineS: 60,
    settings: config.k8s,
    template,
  });
  try {
    await cluster.batch.createNamespacedJob({ namespace: cluster.namespace, body: job });
    const ended = await untilReachedOrEnded(cluster, job.metadata!.name!, () => reached);
    if (reached) return { name, ok: true, detail: `a pod in ${image ?? "the template's image"} reached ${host}` };
    // The pod's own end says more than the silence (an image that does not pull, a command missing, a quota).
    const why = ended?.reason ?? (ended ? `its command exited with code ${ended.exitCode}` : null);
    return {
      name,
      ok: false,
      detail: why
        ? `the check's pod did not call ${url}: ${why}`
        : `no request from the pod reached ${url} in 60 s: pass --gateway-host with an address pods can reach, and check firewalls`,
    };
  } catch (err) {
    return { name, ok: false, detail: `could not run the check's Job: ${apiMessage(err)}` };
  } finally {
    server.close();
    await deleteJob(cluster, job.metadata!.name!).catch(() => {});
  }
}

/** Waits up to 60 s for the request, watching the check's Job: its outcome if it ended without one. */
async function untilReachedOrEnded(cluster: Cluster, name: string, reached: () => boolean): Promise<Outcome | null> {
  const { namespace } = cluster;
  for (let i = 0; i < 120 && !reached(); i++) {
    await new Promise((r) => setTimeout(r, 500));
    if (i % 4 !== 3) continue;
    const job = await cluster.batch.readNamespacedJob({ namespace, name }).catch(() => null);
    const pods = await cluster.core
      .listNamespacedPod({ namespace, labelSelector: `job-name=${name}` })
      .catch(() => null);
    const pod = pods?.items[0];
    const container = job?.spec?.template.spec?.containers[harnessIndex(job.spec.template.spec.containers)].name ?? '';
    const outcome = job ? judge(job, pod, container, Date.now(), 20_000) : null;
    if (outcome) {
      // Give the request a moment to land: the pod may exit as it arrives.
      await new Promise((r) => setTimeout(r, 500));
      return reached() ? null : outcome;
    }
  }
  return null;
}
