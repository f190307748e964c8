import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verlEnvDir } from '../../src/setup/verl-env.js';
import { Store } from '../../src/store/store.js';
import { alight } from '../helpers/cli.js';
import { processMark } from '../helpers/processes.js';
import { tinyModel } from '../helpers/tiny-model.js';
import { HARNESS, project, stepCount, stepsOf, trainArgs, waitFor } from '../helpers/train-project.js';

// Ray nodes on one host, started as a user starts a cluster (`ray start --head`, then `ray start --address` on each
// other node), each with its own ports and one logical GPU, on loopback: a head, a worker and a spare. `alight train
// --nodes 2 --ray-address` places verl's actor across two of them (one rank a node) with a vLLM server on each, and
// trains a LoRA adapter there, merged into the servers' weights at each sync; a worker node's raylet is killed mid-run
// and the run goes on from its last checkpoint on the nodes left. Then a sync is skipped on purpose, and the
// served-policy check stops the run at that step. What one host cannot show (separate /tmp and /dev/shm, gloo over a
// network, distinct addresses, shared storage that is not the same disk) is in docs/verification.md.

const ray = join(verlEnvDir(), 'bin', 'ray');
const env = { RAY_AUTH_MODE: 'disabled' };
const cluster = processMark();
const rayEnv = { ...process.env, ...env, ...cluster.env };
const HEAD = 46_379;

/**
 * `ray start` for a node of the test's cluster: its own ports from `base`, one logical GPU, 8 logical CPUs. `ray start`
 * gives its raylet 30 s to register with the GCS (a constant in Ray's node.py, not the setting its message names),
 * which a loaded machine can miss, the head's own included (CI, 2026-12-07); `ray start` then exits 1 but leaves the
 * node's processes running, and the raylet registers later all the same. So a node whose raylet runs counts as
 * started, and `clusterUp` waits for every node to register before the run.
 */
function startNode(base: number, head: boolean): void {
  try {
    rayStart(base, head);
  } catch (err) {
    if (!raylet(base + 2)) throw err;
  }
}

/** Waits (generously: `waitFor`'s 10 min) until the head's GCS lists `count` alive nodes, as `ray status` prints them. */
async function clusterUp(count: number): Promise<void> {
  const active = () => {
    try {
      const out = execFileSync(ray, ['status', '--address', `127.0.0.1:${HEAD}`], {
        env: rayEnv,
        encoding: 'utf8',
        stdio: 'pipe',
        timeout: 120_000,
      });
      return (/^Active:\n((?: \d+ node_\w+\n)*)/m.exec(out)?.[1] ?? '').split('\n').filter(Boolean).length;
    } catch {
      return 0;
    }
  };
  await waitFor(() => active() >= count);
}

function rayStart(base: number, head: boolean): void {
  const ports = [
    'node-manager',
    'object-manager',
    'dashboard-agent-listen',
    'dashboard-agent-grpc',
    'metrics-export',
    'runtime-env-agent',
  ].flatMap((n, i) => [`--${n}-port`, String(base + 2 + i)]);
  execFileSync(
    ray,
    [
      'start',
      ...(head
        ? ['--head', '--port', String(HEAD), '--include-dashboard', 'false']
        : ['--address', `127.0.0.1:${HEAD}`]),
      ...ports,
      ...(head ? ['--ray-client-server-port', String(base + 1)] : []),
      '--min-worker-port',
      String(base + 20),
      '--max-worker-port',
      String(base + 99),
      '--node-ip-address',
      '127.0.0.1',
      '--num-cpus',
      '8',
      '--num-gpus',
      '1',
      '--object-store-memory',
      String(300 * 2 ** 20),
      '--disable-usage-stats',
    ],
    // Generous: `ray start` waits for its node to register, slow on a loaded machine.
    { env: rayEnv, stdio: 'pipe', timeout: 600_000 },
  );
}

/** The cluster's processes whose command line matches `pattern`, with their parent pids. */
function clusterProcesses(pattern: RegExp): { pid: number; ppid: number; cmd: string }[] {
  const entry = `ALIGHT_TEST_MARK=${cluster.env.ALIGHT_TEST_MARK}`;
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .flatMap((pid) => {
      try {
        const cmd = readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ');
        if (!pattern.test(cmd) || !readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(entry))
          return [];
        const ppid = Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
        return [{ pid: Number(pid), ppid, cmd }];
      } catch {
        return [];
      }
    });
}

const raylet = (port: number) => clusterProcesses(new RegExp(`raylet.*--node_manager_port=${port}\\b`))[0];

const nodes = [HEAD + 100, HEAD + 200, HEAD + 300];
let model: string;
beforeAll(async () => {
  model = tinyModel(3);
  for (const base of nodes) startNode(base, base === nodes[0]);
  await clusterUp(nodes.length);
}, 1_200_000);

afterAll(async () => {
  for (const p of clusterProcesses(/./)) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {}
  }
  expect(await cluster.left()).toEqual([]);
});

describe('alight train --backend verl on two Ray nodes', () => {
  it("places verl's actor and a vLLM server on each of two nodes, trains a LoRA adapter there, survives a node's " +
    'raylet killed mid-run (resumed from its last checkpoint on the nodes left) without losing a recorded rollout, ' +
    'and stops at the step whose sync was skipped on purpose', async () => {
    const p = project([
      { id: 'count', prompt: 'Count to three.' },
      { id: 'year', prompt: 'What year is it?' },
    ]);
    writeFileSync(join(p.dir, 'alight.config.yaml'), 'train:\n  worker:\n    restarts: 1\n');
    const args = [
      ...trainArgs(model, p, 4),
      ...['--backend', 'verl', '--gpus', '1', '--nodes', '2', '--ray-address', `127.0.0.1:${HEAD}`],
      // The adapter's targets as a list with a module that all-linear covers already: verl must read it right.
      ...['--lora-rank', '8', '--lora-targets', 'all-linear,q_proj'],
      ...['--save-every', '1', '--run', 'nodes', '--', process.execPath, HARNESS],
    ];
    let ended = false;
    // Version 4 (after step 3) is not pushed to the servers: steps 0 to 2 pass the check, step 3 must not.
    const fault = { ALIGHT_FAULT_SKIP_RELOAD: '4' };
    const run = alight(args, { cwd: p.dir, timeoutMs: 1_200_000, env: { ...env, ...fault } }).finally(() => {
      ended = true;
    });
    await waitFor(() => ended || stepCount(p.db, 'nodes') >= 1);
    expect(ended, 'the run ended before its first step').toBe(false);
    // One actor rank under each of two nodes' raylets; one that is not the head's dies.
    const raylets = nodes.map((base) => raylet(base + 2));
    const actors = clusterProcesses(/ray::WorkerDict/).map((a) => a.ppid);
    const hosts = raylets.filter((r) => actors.includes(r.pid));
    expect([actors.length, hosts.length]).toEqual([2, 2]);
    process.kill(hosts.filter((r) => r !== raylets[0]).at(-1)!.pid, 'SIGKILL');
    const res = await run;
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toMatch(/the Python worker exited with code 3 during step [12]/);
    expect(res.stderr).toMatch(/served-policy check after step 3: (not synced|synced but different)/);
    const steps = stepsOf(p.db, 'nodes');
    expect(steps.map((s) => s.step)).toEqual([0, 1, 2]);
    // The merged weights against base + adapter: float32 rounding (measured 1e-4 to 5e-4 on one node, 2.2e-3 once
    // across two after the resume, in CI); not measured: how far a missed sync would move it.
    for (const s of steps) expect(s.metrics.served_logprob_diff).toBeLessThan(1e-2);
    const log = readFileSync(join(p.dir, '.alight', 'runs', 'nodes', 'worker.log'), 'utf8');
    // A server on each node, at the address it joined with (Ray reports a loopback one as the machine's own), at
    // both starts.
    expect(log.match(/: 2 vLLM server\(s\) at [\d.]+:\d+, [\d.]+:\d+ in/g)?.length).toBe(2);
    expect(log).toMatch(/fault injected: version 4 not pushed/);
    // Every attempt's rollouts stay recorded, the interrupted one's too.
    const store = Store.open(p.db);
    const groups = store.db.prepare(`SELECT DISTINCT group_id AS g FROM rollouts WHERE run = 'nodes'`).all();
    store.close();
    expect(groups.length).toBeGreaterThan(4 * 2);
    // Each rank saved its shard into the checkpoint both nodes see.
    const last = join(p.dir, '.alight', 'runs', 'nodes', 'checkpoints', 'step-2');
    expect(
      readdirSync(last)
        .filter((f) => f.startsWith('model_world_size_2_rank_'))
        .sort(),
    ).toEqual(['model_world_size_2_rank_0.pt', 'model_world_size_2_rank_1.pt']);
  }, 1_200_000);
});
