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

// Two Ray nodes on one host, started as a user starts a cluster (`ray start --head`, then `ray start --address` on the
// other node), each with its own ports and one logical GPU, on loopback. `alight train --nodes 2 --ray-address` places
// verl's actor across both (one rank a node) with a vLLM server on each; the worker node's raylet is killed mid-run and
// a new worker node joins, and the run goes on from its last checkpoint. What one host cannot show (separate /tmp and
// /dev/shm, gloo over a network, distinct addresses, shared storage that is not the same disk) is in
// docs/verification.md.

const ray = join(verlEnvDir(), 'bin', 'ray');
const env = { RAY_AUTH_MODE: 'disabled' };
const cluster = processMark();
const HEAD = 46_379;

/**
 * `ray start` for a node of the test's cluster: its own ports from `base`, one logical GPU, 8 logical CPUs. `ray start`
 * gives its raylet 30 s to register with the head, which a loaded machine can miss; the raylet registers later all the
 * same, so a node whose raylet runs counts as started.
 */
function startNode(base: number, head: boolean): void {
  try {
    rayStart(base, head);
  } catch (err) {
    if (head || !raylet(base + 2)) throw err;
  }
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
    { env: { ...process.env, ...env, ...cluster.env }, stdio: 'pipe', timeout: 600_000 },
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

let model: string;
beforeAll(() => {
  model = tinyModel(3);
  startNode(HEAD + 100, true);
  startNode(HEAD + 200, false);
}, 300_000);

afterAll(async () => {
  for (const p of clusterProcesses(/./)) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {}
  }
  expect(await cluster.left()).toEqual([]);
});

describe('alight train --backend verl on two Ray nodes', () => {
  it("places verl's actor and a vLLM server on each node, survives the worker node's raylet killed mid-run " +
    '(a new node joins, the run resumes from its last checkpoint), and loses no recorded rollout', async () => {
    const p = project([
      { id: 'count', prompt: 'Count to three.' },
      { id: 'year', prompt: 'What year is it?' },
    ]);
    writeFileSync(join(p.dir, 'alight.config.yaml'), 'train:\n  restarts: 1\n');
    const args = [
      ...trainArgs(model, p, 3),
      ...['--backend', 'verl', '--gpus', '1', '--nodes', '2', '--ray-address', `127.0.0.1:${HEAD}`],
      ...['--save-every', '1', '--run', 'nodes', '--', process.execPath, HARNESS],
    ];
    let ended = false;
    const run = alight(args, { cwd: p.dir, timeoutMs: 1_200_000, env }).finally(() => {
      ended = true;
    });
    await waitFor(() => ended || stepCount(p.db, 'nodes') >= 1);
    expect(ended, 'the run ended before its first step').toBe(false);
    // One actor rank under each node's raylet.
    const [head, worker] = [raylet(HEAD + 102), raylet(HEAD + 202)];
    const actors = clusterProcesses(/ray::WorkerDict/).map((a) => a.ppid);
    expect(actors.sort()).toEqual([head.pid, worker.pid].sort());
    // A spare node joins (new ports, as a new machine would have), then the worker node dies: the restarted run's second
    // rank goes to the spare.
    startNode(HEAD + 300, false);
    process.kill(worker.pid, 'SIGKILL');
    const res = await run;
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/the Python worker exited with code 3 during step \d/);
    const steps = stepsOf(p.db, 'nodes');
    expect(steps.map((s) => s.step)).toEqual([0, 1, 2]);
    for (const s of steps) expect(s.metrics.served_logprob_diff).toBeLessThan(1e-4);
    const log = readFileSync(join(p.dir, '.alight', 'runs', 'nodes', 'worker.log'), 'utf8');
    // A server on each node, at the address it joined with (Ray reports a loopback one as the machine's own), at
    // both starts.
    expect(log.match(/: 2 vLLM server\(s\) at [\d.]+:\d+, [\d.]+:\d+ in/g)?.length).toBe(2);
    // Every attempt's rollouts stay recorded, the interrupted one's too.
    const store = Store.open(p.db);
    const groups = store.db.prepare(`SELECT DISTINCT group_id AS g FROM rollouts WHERE run = 'nodes'`).all();
    store.close();
    expect(groups.length).toBeGreaterThan(3 * 2);
    // Each rank saved its shard into the checkpoint both nodes see.
    const last = join(p.dir, '.alight', 'runs', 'nodes', 'checkpoints', 'step-2');
    expect(
      readdirSync(last)
        .filter((f) => f.startsWith('model_world_size_2_rank_'))
        .sort(),
    ).toEqual(['model_world_size_2_rank_0.pt', 'model_world_size_2_rank_1.pt']);
  }, 1_200_000);
});
