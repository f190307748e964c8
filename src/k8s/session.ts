import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { type V1Lease, V1MicroTime, type V1OwnerReference } from '@kubernetes/client-node';
import { type Cluster, statusOf, withRetries } from './cluster.js';
import { label, managedBy } from './job-spec.js';

/**
 * This alight process's claim on its Jobs: a Lease it renews (a heartbeat) that owns every Job it creates. When the
 * process ends it deletes its Jobs and the Lease; when it is killed, the heartbeat stops, and the next alight to start
 * in the namespace deletes the expired Lease's Jobs (and the Lease, whose garbage collection would take them too).
 */
export interface Session {
  id: string;
  owner: V1OwnerReference;
  /** Stops the heartbeat, deletes the session's Jobs (foreground, waiting up to `waitMs` for them to go) and its Lease. */
  end(waitMs?: number): Promise<number>;
}

const selectorOf = (id: string): string => `${label.session}=${id}`;

export async function openSession(
  cluster: Cluster,
  leaseS: number,
  onProblem: (message: string) => void = () => {},
): Promise<Session> {
  const id = `${hostname()
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .slice(0, 30)}-${randomBytes(4).toString('hex')}`;
  const { namespace } = cluster;
  const body: V1Lease = {
    metadata: { name: `alight-${id}`, labels: { ...managedBy, [label.session]: id } },
    spec: {
      holderIdentity: `${hostname()} pid ${process.pid}`,
      leaseDurationSeconds: leaseS,
      acquireTime: new V1MicroTime(),
      renewTime: new V1MicroTime(),
    },
  };
  const lease = await withRetries(() => cluster.leases.createNamespacedLease({ namespace, body }));
  const beat = (): Promise<void> =>
    heartbeat(cluster, lease.metadata!.name!).catch((err) => {
      // Deleted by another alight that took this one for dead: the garbage collector now takes each Job it owns.
      if (statusOf(err) === 404)
        onProblem(`this run's Lease ${lease.metadata!.name} was deleted: its Jobs will be too`);
    });
  const renew = setInterval(() => void beat(), (leaseS * 1000) / 3);
  renew.unref();
  return {
    id,
    owner: {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      name: lease.metadata!.name!,
      uid: lease.metadata!.uid!,
    },
    async end(waitMs = 30_000) {
      clearInterval(renew);
      const left = await deleteJobs(cluster, selectorOf(id), waitMs);
      await cluster.leases.deleteNamespacedLease({ namespace, name: lease.metadata!.name! }).catch(() => {});
      return left;
    },
  };
}

async function heartbeat(cluster: Cluster, name: string): Promise<void> {
  const { namespace } = cluster;
  const lease = await cluster.leases.readNamespacedLease({ namespace, name });
  lease.spec = { ...lease.spec, renewTime: new V1MicroTime() };
  await cluster.leases.replaceNamespacedLease({ namespace, name, body: lease });
}

/**
 * Deletes the Jobs (and Leases) of alight processes whose heartbeat stopped: a run killed before it could clean up.
 * Returns how many Jobs went.
 */
export async function reapOrphans(cluster: Cluster, now = Date.now()): Promise<number> {
  const { namespace } = cluster;
  const selector = Object.entries(managedBy).map(([k, v]) => `${k}=${v}`)[0];
  // Jobs first: a Job's Lease exists before it, so a session that starts between the two lists is seen live.
  const jobs = await withRetries(() => cluster.batch.listNamespacedJob({ namespace, labelSelector: selector }));
  const leases = await withRetries(() => cluster.leases.listNamespacedLease({ namespace, labelSelector: selector }));
  const live = new Set<string>();
  for (const lease of leases.items) {
    const renewed = new Date(lease.spec?.renewTime ?? lease.metadata?.creationTimestamp ?? 0).getTime();
    const session = lease.metadata?.labels?.[label.session];
    if (session && renewed + (lease.spec?.leaseDurationSeconds ?? 60) * 1000 > now) live.add(session);
  }
  // A Job without a session (doctor's check) has its own deadline and TTL: not reaped.
  const sessionOf = (j: (typeof jobs.items)[number]): string => j.metadata?.labels?.[label.session] ?? '';
  const orphaned = jobs.items.filter((j) => sessionOf(j) !== '' && !live.has(sessionOf(j)));
  await Promise.all(orphaned.map((j) => deleteJob(cluster, j.metadata!.name!)));
  const stale = leases.items.filter((l) => !live.has(l.metadata?.labels?.[label.session] ?? ''));
  await Promise.all(
    stale.map((l) => cluster.leases.deleteNamespacedLease({ namespace, name: l.metadata!.name! }).catch(() => {})),
  );
  return orphaned.length;
}

/** Deletes one Job and its pods (foreground: the Job goes last); one already gone is fine. */
export async function deleteJob(cluster: Cluster, name: string): Promise<void> {
  try {
    await withRetries(() =>
      cluster.batch.deleteNamespacedJob({ namespace: cluster.namespace, name, propagationPolicy: 'Foreground' }),
    );
  } catch (err) {
    if (statusOf(err) !== 404) throw err;
  }
}

/** Deletes the Jobs a selector matches and waits up to `waitMs` for them to be gone; returns how many are left. */
async function deleteJobs(cluster: Cluster, labelSelector: string, waitMs: number): Promise<number> {
  const { namespace } = cluster;
  const list = () => withRetries(() => cluster.batch.listNamespacedJob({ namespace, labelSelector }), 3);
  const until = Date.now() + waitMs;
  for (;;) {
    const jobs = (await list().catch(() => ({ items: [] }))).items;
    const live = jobs.filter((j) => !j.metadata?.deletionTimestamp);
    await Promise.all(live.map((j) => deleteJob(cluster, j.metadata!.name!).catch(() => {})));
    if (jobs.length === 0 || Date.now() >= until) return jobs.length;
    await new Promise((r) => setTimeout(r, 500));
  }
}
