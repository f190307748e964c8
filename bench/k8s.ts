/**
 * The Kubernetes launcher against the bare API: N Jobs of `echo hi` in busybox on the cluster KUBECONFIG points to
 * (scripts/k8s-local/up.sh), created, waited for and deleted with plain client calls (create, read the status every
 * 200 ms, delete), then as rollouts through src/k8s/launcher.ts (its session Lease, the watch, the log follow and the
 * final read, the termination message), one at a time and 4 at once. What it costs is wall time per Job and this
 * process's CPU per Job.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Job } from '@kubernetes/client-node';
import { configSchema } from '../src/config/schema.js';
import { connect } from '../src/k8s/cluster.js';
import { startK8sLauncher } from '../src/k8s/job-launcher.js';
import { perItem } from './per-item.js';

const n = Number(process.env.N ?? 8);
const image = process.env.IMAGE ?? 'localhost/busybox:local';
const cluster = connect({});
const namespace = cluster.namespace;
const config = configSchema.parse({ runner: 'k8s', k8s: { image }, gateway: { advertise: '127.0.0.1' } });
const dir = mkdtempSync(join(tmpdir(), 'alight-bench-k8s-'));
const signal = new AbortController().signal;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function bare(i: number): Promise<void> {
  const name = `bench-bare-${process.pid}-${i}`;
  const body: V1Job = {
    metadata: { name },
    spec: {
      backoffLimit: 0,
      template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image, command: ['echo', 'hi'] }] } },
    },
  };
  await cluster.batch.createNamespacedJob({ namespace, body });
  for (;;) {
    const job = await cluster.batch.readNamespacedJob({ namespace, name });
    if (job.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True')) break;
    await sleep(200);
  }
  await cluster.batch.deleteNamespacedJob({ namespace, name, propagationPolicy: 'Foreground' });
}

const launcher = await startK8sLauncher(config);
let rollout = 0;
const viaLauncher = async (): Promise<void> => {
  const id = `ro_bench${process.pid}x${rollout++}`;
  const r = await launcher.run({
    command: 'echo',
    args: ['hi'],
    env: {},
    withhold: [],
    output: { stdout: join(dir, `${id}.out`), stderr: join(dir, `${id}.err`) },
    timeoutMs: 120_000,
    signal,
    rollout: { id, run: 'bench', taskId: null, task: null },
  });
  if (r.exitCode !== 0) throw new Error(`${id}: ${r.reason ?? r.exitCode}`);
};
console.log('| Jobs | parallel | bare API s/Job | launcher s/Job | ratio | bare CPU ms/Job | launcher CPU ms/Job |');
console.log('|--:|--:|--:|--:|--:|--:|--:|');
for (const parallel of [1, 4]) {
  const b = await perItem(n, parallel, bare);
  const l = await perItem(n, parallel, viaLauncher);
  console.log(
    `| ${n} | ${parallel} | ${(b.wallMs / 1000).toFixed(2)} | ${(l.wallMs / 1000).toFixed(2)} | ` +
      `${(l.wallMs / b.wallMs).toFixed(2)} | ${b.cpuMs.toFixed(1)} | ${l.cpuMs.toFixed(1)} |`,
  );
}
await launcher.close();
rmSync(dir, { recursive: true, force: true });
