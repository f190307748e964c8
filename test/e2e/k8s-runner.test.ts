import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NetworkingV1Api, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { Prediction } from '../../src/eval/grade/grade-types.js';
import { type Cluster, connect } from '../../src/k8s/cluster.js';
import { packageRoot } from '../../src/package-root.js';
import { type RolloutSummary, Store } from '../../src/store/store.js';
import { alight, BIN, FIXTURES, readJsonl } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { instanceGrading } from '../helpers/instance-grading.js';
import { fixtureImage } from '../helpers/instance-image.js';
import { clusterDown, clusterUp, importImage, KUBECONFIG, stopApiServer } from '../helpers/k8s-cluster.js';
import { type ScriptedUpstream, startScriptedUpstream } from '../helpers/scripted-upstream.js';
import { makeSweRepo } from '../helpers/swe-repo.js';
import { tinyModel } from '../helpers/tiny-model.js';

// A real single-node Kubernetes (scripts/k8s-local): each rollout a Job in localhost/alight-py:local (Debian, Python
// with the openai SDK), the harness reaching the gateway on this host's address.
const IMAGE = 'localhost/alight-py:local';
const env = { KUBECONFIG };
let upstream: ScriptedUpstream;
let cluster: Cluster;
let dir: string;
beforeAll(async () => {
  await clusterUp();
  cluster = connect({ kubeconfig: KUBECONFIG });
  upstream = await startScriptedUpstream({ reply: (i) => `answer ${i}`, tokensPerChunk: 2 });
  dir = tempDir();
}, 300_000);
/** Instance images podman built for these tests: removed at the end (podman's storage outlives the run). */
const built = new Set<string>();
afterAll(async () => {
  try {
    await upstream?.close();
    await clusterDown();
  } finally {
    for (const image of built) execFileSync('podman', ['rmi', '-f', image], { stdio: 'ignore' });
  }
}, 120_000);

const harness = ['python3', '-c', readFileSync(join(FIXTURES, 'sdk_harness.py'), 'utf8')];
const jobsOf = async (run: string) =>
  (await cluster.batch.listNamespacedJob({ namespace: 'default', labelSelector: `alight.dev/run=${run}` })).items;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A project folder: its store, its tasks and a config that runs them on the cluster. */
function project(name: string, tasks: object[], k8s = ''): { db: string; tasks: string; config: string } {
  const d = join(dir, name);
  mkdirSync(d, { recursive: true });
  const files = { db: join(d, 'alight.db'), tasks: join(d, 'tasks.jsonl'), config: join(d, 'alight.config.yaml') };
  writeFileSync(files.tasks, tasks.map((t) => JSON.stringify(t)).join('\n'));
  writeFileSync(files.config, `runner: k8s\nk8s:\n  image: ${IMAGE}\n${k8s}`);
  return files;
}

const recordArgs = (p: { db: string; tasks: string; config: string }, run: string, ...more: string[]) => [
  'record',
  '--upstream',
  upstream.url,
  '--config',
  p.config,
  '--db',
  p.db,
  '--run',
  run,
  '--tasks',
  p.tasks,
  ...more,
];

/** `alight record` in the background, for a test that interrupts it. */
function background(args: string[]): { child: ChildProcess; done: Promise<{ code: number | null; stderr: string }> } {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  child.stdout!.resume();
  const done = new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stderr })),
  );
  return { child, done };
}

/** Waits until `count` of the run's pods are running. */
async function running(run: string, count: number): Promise<void> {
  for (let i = 0; i < 120; i++) {
    const pods = await cluster.core.listNamespacedPod({ namespace: 'default', labelSelector: `alight.dev/run=${run}` });
    if (pods.items.filter((p) => p.status?.phase === 'Running').length >= count) return;
    await sleep(500);
  }
  throw new Error(`${count} pods of ${run} never ran`);
}

describe('alight record --runner k8s', () => {
  it('runs each rollout as a Job: every call recorded with exact token ids, rewards from the pods, logs, Jobs gone', async () => {
    const p = project('ok', [
      { id: 'a', prompt: 'fix a', reward: 1 },
      { id: 'b', prompt: 'fix b', reward: 0.5 },
    ]);
    const res = await alight(
      [...recordArgs(p, 'k8s-ok', '-n', '4', '--concurrency', '4', '--json', '--'), ...harness],
      {
        env,
        timeoutMs: 300_000,
      },
    );
    expect(res.stderr).not.toContain('unexpected error');
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout), res.stderr).toMatchObject({
      rollouts: 8,
      succeeded: 8,
      failed: 0,
      calls: 24,
      error_calls: 0,
    });
    const store = Store.open(p.db);
    const rollouts = store.rolloutSummaries({ run: 'k8s-ok' });
    for (const r of rollouts) {
      expect(r.reward).toBe({ a: 1, b: 0.5 }[r.task_id!]);
      const calls = store.calls.list(r.id);
      expect(calls).toHaveLength(3);
      for (const call of calls) {
        const produced = upstream.log.filter((x) =>
          (x.request.messages as { content: string }[]).at(-1)!.content.startsWith(`${r.id} turn ${call.seq}`),
        );
        expect(produced).toHaveLength(1);
        expect(call.promptIds).toEqual(produced[0].promptIds);
        expect(call.completionIds).toEqual(produced[0].completionIds);
      }
      // The pod's output, streamed into the rollout's log; the stderr log says where it ran.
      const logs = join(p.db, '..', 'runs', 'k8s-ok', 'rollouts');
      expect(readFileSync(join(logs, `${r.id}.stdout.log`), 'utf8')).toContain(`done ${r.id}`);
      expect(readFileSync(join(logs, `${r.id}.stderr.log`), 'utf8')).toMatch(
        /alight: Job alight-ro-\w+, pod .* on alight-node/,
      );
    }
    store.close();
    expect(await jobsOf('k8s-ok')).toEqual([]);
  }, 300_000);
});

describe('alight record --runner k8s: how rollouts end', () => {
  it('tells apart an exit 1, OOMKilled, the deadline and an image that does not exist (fast, infra, retried)', async () => {
    const p = project(
      'fail',
      [
        { id: 'exit1', image: IMAGE, script: 'echo bye >&2; exit 1' },
        { id: 'oom', image: IMAGE, script: 'python3 -c "x = b\'x\' * (400 << 20)"' },
        { id: 'deadline', image: IMAGE, script: 'sleep 120' },
        { id: 'badimage', image: 'localhost/no-such-image:local', script: 'true' },
        { id: 'fine', image: IMAGE, script: 'echo fine' },
      ],
      '  pendingS: 3\n  retryInfra: 1\n  resources: {limits: {memory: 128Mi}}\n',
    );
    // The image comes from a task field; the harness command too.
    writeFileSync(p.config, readFileSync(p.config, 'utf8').replace(`image: ${IMAGE}`, "image: '{{image}}'"));
    const res = await alight(
      [...recordArgs(p, 'k8s-fail', '--concurrency', '6', '--timeout', '8', '--json', '--'), 'sh', '-c', '{{script}}'],
      { env, timeoutMs: 300_000 },
    );
    expect(res.code).toBe(0);
    const store = Store.open(p.db);
    const byTask = new Map<string, RolloutSummary[]>();
    for (const r of store.rolloutSummaries({ run: 'k8s-fail' }))
      byTask.set(r.task_id!, [...(byTask.get(r.task_id!) ?? []), r]);
    store.close();
    const one = (task: string) => {
      expect(byTask.get(task)).toHaveLength(1);
      return byTask.get(task)![0];
    };
    expect(one('exit1')).toMatchObject({ state: 'failed', exit_code: 1, error: 'exited with code 1: bye' });
    expect(one('oom')).toMatchObject({ state: 'failed', exit_code: 137 });
    expect(one('oom').error).toMatch(/^OOMKilled/);
    expect(one('deadline')).toMatchObject({ state: 'failed', error: 'timeout' });
    expect(one('fine')).toMatchObject({ state: 'succeeded', exit_code: 0 });
    // An infrastructure failure: marked, run again once as a new rollout (retryInfra: 1), never trained on.
    const bad = byTask.get('badimage')!;
    expect(bad).toHaveLength(2);
    // Failed at the pending limit, as the infrastructure's (a wait to the 8 s deadline would read `timeout`).
    for (const r of bad) expect(r.error).toMatch(/^infrastructure: (ErrImagePull|ImagePullBackOff)/);
    expect(await jobsOf('k8s-fail')).toEqual([]);
  }, 300_000);

  it("runs --reward-cmd in the pod after the harness: it sees the harness's files", async () => {
    const p = project('reward', [{ id: 'r', prompt: 'x', reward: null }]);
    const res = await alight(
      [
        ...recordArgs(
          p,
          'k8s-reward',
          '-n',
          '2',
          '--reward-cmd',
          'test -s /tmp/answer && echo "score: 0.75"',
          '--json',
          '--',
        ),
        ...harness,
      ],
      { env, timeoutMs: 300_000 },
    );
    expect(res.code).toBe(0);
    const store = Store.open(p.db);
    const rollouts = store.rolloutSummaries({ run: 'k8s-reward' });
    expect(rollouts.map((r) => [r.state, r.reward])).toEqual([
      ['succeeded', 0.75],
      ['succeeded', 0.75],
    ]);
    store.close();
  }, 300_000);
});

describe('alight record --runner k8s: interruptions', () => {
  it("Ctrl-C deletes the run's Jobs and exits 130", async () => {
    const p = project('ctrlc', [{ id: 's', behaviour: 'sleep' }]);
    const run = background([...recordArgs(p, 'k8s-ctrlc', '-n', '2', '--'), ...harness]);
    await running('k8s-ctrlc', 2);
    run.child.kill('SIGINT');
    const { code } = await run.done;
    expect(code).toBe(130);
    expect(await jobsOf('k8s-ctrlc')).toEqual([]);
    const store = Store.open(p.db);
    expect(store.rolloutSummaries({ run: 'k8s-ctrlc' }).map((r) => r.error)).toEqual(['interrupted', 'interrupted']);
    store.close();
  }, 300_000);

  it('an alight killed with SIGKILL leaves Jobs; the next one to start deletes them', async () => {
    const p = project('killed', [{ id: 's', behaviour: 'sleep' }], '  leaseS: 3\n');
    const run = background([...recordArgs(p, 'k8s-killed', '-n', '2', '--'), ...harness]);
    await running('k8s-killed', 2);
    run.child.kill('SIGKILL');
    await run.done;
    expect(await jobsOf('k8s-killed')).toHaveLength(2);
    await sleep(4000); // its heartbeat's lease runs out
    const next = project('next', [{ id: 'n', prompt: 'x', reward: 1 }]);
    const res = await alight([...recordArgs(next, 'k8s-next', '--'), ...harness], { env, timeoutMs: 300_000 });
    expect(res.code).toBe(0);
    expect(res.stderr).toContain('deleted 2 Job(s) left by an alight that stopped without cleaning up');
    for (let i = 0; i < 60 && (await jobsOf('k8s-killed')).length > 0; i++) await sleep(500);
    expect(await jobsOf('k8s-killed')).toEqual([]);
  }, 300_000);

  it('survives an API server restart mid-run: the watch resumes and no rollout is lost', async () => {
    const p = project('apiserver', [{ id: 'a', prompt: 'x', reward: 1, pause: 12 }]);
    const run = background([...recordArgs(p, 'k8s-api', '-n', '3', '--json', '--'), ...harness]);
    await running('k8s-api', 3);
    await stopApiServer();
    await sleep(3000);
    await clusterUp(); // starts the API server again (the rest is still running)
    const { code, stderr } = await run.done;
    expect(stderr).not.toContain('unexpected error');
    expect(stderr).toMatch(/watch of \/apis\/batch\/v1\/namespaces\/default\/jobs dropped \(.*\); resuming/);
    expect(code).toBe(0);
    const store = Store.open(p.db);
    const rollouts = store.rolloutSummaries({ run: 'k8s-api' });
    expect(rollouts.map((r) => [r.state, r.reward, r.calls])).toEqual([
      ['succeeded', 1, 3],
      ['succeeded', 1, 3],
      ['succeeded', 1, 3],
    ]);
    store.close();
    expect(await jobsOf('k8s-api')).toEqual([]);
  }, 300_000);
});

describe('alight train --runner k8s', () => {
  it('runs two steps of the CPU demo with its harness in pods (a Job template mounts the project)', async () => {
    const d = join(dir, 'train');
    mkdirSync(d, { recursive: true });
    // The demo's harness is a Node script on the openai SDK: the image has Node, the template mounts this checkout
    // (and its node_modules) where it is here.
    writeFileSync(
      join(d, 'job.yaml'),
      [
        'apiVersion: batch/v1',
        'kind: Job',
        'spec:',
        '  template:',
        '    spec:',
        '      containers:',
        '        - name: harness',
        `          image: ${IMAGE}`,
        `          volumeMounts: [{name: project, mountPath: ${packageRoot}, readOnly: true}]`,
        `      volumes: [{name: project, hostPath: {path: ${packageRoot}}}]`,
      ].join('\n'),
    );
    writeFileSync(join(d, 'alight.config.yaml'), `runner: k8s\nk8s:\n  template: ${join(d, 'job.yaml')}\n`);
    const db = join(d, 'alight.db');
    const res = await alight(
      [
        'train',
        '--model',
        tinyModel(0),
        '--tasks',
        join(packageRoot, 'examples/vowels/tasks.jsonl'),
        '-n',
        '4',
        '--batch-size',
        '2',
        '--steps',
        '2',
        '--lr',
        '0.01',
        '--config',
        join(d, 'alight.config.yaml'),
        '--db',
        db,
        '--run',
        'k8s-train',
        '--json',
        '--',
        'node',
        join(packageRoot, 'examples/vowels/harness.mjs'),
      ],
      { env, cwd: d, timeoutMs: 600_000 },
    );
    expect(res.code, res.stderr).toBe(0);
    const store = Store.open(db);
    expect(store.trainSteps('k8s-train')).toHaveLength(2);
    const rollouts = store.rolloutSummaries({ run: 'k8s-train' });
    expect(rollouts).toHaveLength(2 * 2 * 4);
    for (const r of rollouts) {
      expect(r).toMatchObject({ state: 'succeeded', calls: 2 });
      expect(r.reward).toBeGreaterThanOrEqual(0);
    }
    store.close();
    expect(await jobsOf('k8s-train')).toEqual([]);
  }, 600_000);
});

describe('alight doctor --runner k8s', () => {
  it('passes with the admin kubeconfig: permissions, and a pod in the image reaching the gateway address', async () => {
    const res = await alight(['doctor', '--runner', 'k8s', '--image', IMAGE, '--json'], { env, timeoutMs: 120_000 });
    expect(res.code, res.stdout + res.stderr).toBe(0);
    const report = JSON.parse(res.stdout);
    expect(report).toMatchObject({ context: 'alight-local', user: 'admin', namespace: 'default' });
    expect(report.checks.map((c: { name: string; ok: boolean }) => [c.name, c.ok])).toEqual([
      ['kubeconfig', true],
      ['API server', true],
      ['namespace default', true],
      ['may create/get/list/watch/delete jobs', true],
      ['may get/list/watch pods', true],
      ['may get pods/log', true],
      ['may create/get/list/update/delete leases', true],
      ['may create pods/exec', true],
      ['may create networkpolicies', true],
      ['a pod reaches the gateway', true],
    ]);
  }, 180_000);

  it("says why the reach check's pod did not call: an image that does not pull", async () => {
    const res = await alight(['doctor', '--runner', 'k8s', '--image', 'localhost/no-such-image:local'], {
      env,
      timeoutMs: 120_000,
    });
    expect(res.code).toBe(1);
    expect(res.stdout).toMatch(
      /a pod reaches the gateway\s+FAIL\s+the check's pod did not call .*: (ErrImagePull|ImagePullBackOff)/,
    );
  }, 180_000);

  it('names what a service account lacks, and the Role it prints grants exactly that', async () => {
    const namespace = 'default';
    await cluster.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'alight-bot' } } });
    const token = (
      await cluster.core.createNamespacedServiceAccountToken({
        namespace,
        name: 'alight-bot',
        body: { spec: { audiences: [] } },
      })
    ).status!.token;
    const kubeconfig = join(dir, 'bot.kubeconfig');
    const ca = join(KUBECONFIG, '..', 'pki', 'ca.crt');
    writeFileSync(
      kubeconfig,
      `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:6443", certificate-authority: ${ca}}}]\n` +
        `users: [{name: bot, user: {token: ${token}}}]\ncontexts: [{name: bot, context: {cluster: c, user: bot, namespace: default}}]\n` +
        'current-context: bot\n',
    );
    const doctor = () =>
      alight(['doctor', '--runner', 'k8s', '--image', IMAGE], { env: { KUBECONFIG: kubeconfig }, timeoutMs: 120_000 });
    const denied = await doctor();
    expect(denied.code).toBe(1);
    expect(denied.stdout).toMatch(
      /may create\/get\/list\/watch\/delete jobs\s+FAIL\s+denied: create, get, list, watch, delete/,
    );
    expect(denied.stdout).toMatch(/may get pods\/log\s+FAIL/);
    // The grader's permissions: a question, not a failure (only `eval --grader k8s` needs them).
    expect(denied.stdout).toMatch(/may create pods\/exec\s+\?\s+denied: create \(needed only by eval --grader k8s/);
    expect(denied.stdout).not.toContain(token);
    // The printed Role and RoleBinding, applied as a user would (kubectl apply -f), make it pass.
    const [role, binding] = parseAllDocuments(denied.stdout.split('as a Role (kubectl apply -f):\n\n')[1]).map((d) =>
      d.toJS(),
    );
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'alight-bot', namespace: 'default' }]);
    const rbac = cluster.kc.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({ namespace, body: role });
    await rbac.createNamespacedRoleBinding({ namespace, body: binding });
    const allowed = await doctor();
    expect(allowed.code, allowed.stdout).toBe(0);
    expect(allowed.stdout).toMatch(/a pod reaches the gateway\s+ok/);
    expect(allowed.stdout).toMatch(/may create networkpolicies\s+ok/);
  }, 300_000);
});

/** The fixture repository under `root` and its instance image (built with podman), imported into the cluster. */
async function clusterInstance(root: string) {
  const fx = makeSweRepo(root);
  const image = fixtureImage(fx, 'acme_calc_k8s');
  built.add(image);
  await importImage(image);
  return { fx, image };
}

describe('alight eval swebench --runtime k8s', () => {
  it('runs each attempt as a Job in the instance image, the harness inside it; the diff comes back and is graded in a fresh pod', async () => {
    const root = join(dir, 'eval');
    const { fx, image } = await clusterInstance(root);
    const tasks = join(root, 'tasks.jsonl');
    const actions = ['fix', 'wrong', 'nothing'];
    writeFileSync(
      tasks,
      actions
        .map((a, i) => JSON.stringify({ ...fx.instance, image, instance_id: `acme__calc-${i + 1}`, harness_action: a }))
        .join('\n'),
    );
    const out = join(root, 'out');
    const res = await alight(
      [
        'eval',
        'swebench',
        '--tasks',
        tasks,
        '--runtime',
        'k8s',
        '--upstream',
        upstream.url,
        '--run',
        'k8s-eval',
        '--db',
        join(root, 'alight.db'),
        '--out',
        out,
        '--concurrency',
        '3',
        '--json',
        '--',
        'python3',
        '-c',
        readFileSync(join(FIXTURES, 'swe_pod_harness.py'), 'utf8'),
      ],
      { env, timeoutMs: 300_000 },
    );
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({
      total_instances: 3,
      resolved_ids: ['acme__calc-1'],
      unresolved_ids: ['acme__calc-2', 'acme__calc-3'],
      error_ids: [],
    });
    const predictions = readJsonl<Prediction>(join(out, 'predictions.jsonl'));
    const fixed = predictions.find((p) => p.instance_id === 'acme__calc-1')?.model_patch;
    expect(fixed).toContain('+    return a + b');
    expect(fixed).toMatch(/\+\+\+ b\/NOTES\.md\n@@ -0,0 \+1(,\d+)? @@\n\+model said: answer \d+/);
    expect(predictions.find((p) => p.instance_id === 'acme__calc-3')?.model_patch).not.toContain('calc.py');
    // This cluster's CNI (the bridge plugin) does not enforce NetworkPolicy: the grader found out, and says so.
    expect(res.stderr).toContain('this cluster does not enforce NetworkPolicy, so the tests ran with the network on');
    expect(await jobsOf('k8s-eval')).toEqual([]);
    expect(await jobsOf('grade')).toEqual([]);
  }, 600_000);

  describe('--grader k8s', () => {
    let grading: ReturnType<typeof instanceGrading>;
    beforeAll(async () => {
      const root = join(dir, 'grade');
      const { fx, image } = await clusterInstance(root);
      grading = instanceGrading(root, fx, image);
    }, 300_000);

    it('grades every prediction in a fresh pod of the instance image as the local grader does; no pod or policy left', async () => {
      const { stderr } = await grading.gradeAllCases('k8s', env);
      expect(stderr).toContain('does not enforce NetworkPolicy');
      expect(await jobsOf('grade')).toEqual([]);
      const networking = cluster.kc.makeApiClient(NetworkingV1Api);
      // The policy is the session Lease's: the garbage collector takes it once the Lease goes.
      for (let i = 0; i < 40; i++) {
        const policies = await networking.listNamespacedNetworkPolicy({ namespace: 'default' });
        if (policies.items.length === 0) return;
        await sleep(500);
      }
      throw new Error('the grading NetworkPolicy was left behind');
    }, 300_000);

    it('data validate --grader k8s: the verdicts from fresh pods of the instance image', async () => {
      const db = join(dir, 'grade', 'validate.db');
      const file = grading.tasks([
        { instance_id: 'acme__calc-1' },
        { instance_id: 'acme__calc-2', FAIL_TO_PASS: '["tests/test_calc.py::test_mul"]', PASS_TO_PASS: '[]' },
      ]);
      expect((await alight(['data', 'import', file, '--db', db])).code).toBe(0);
      const res = await alight(['data', 'validate', '--grader', 'k8s', '--workers', '2', '--db', db, '--json'], {
        env,
        timeoutMs: 300_000,
      });
      expect(res.code, res.stderr).toBe(0);
      expect(JSON.parse(res.stdout).byVerdict).toEqual({ valid: 1, 'f2p-passes-without-fix': 1 });
      expect(await jobsOf('grade')).toEqual([]);
    }, 300_000);

    it('refuses the reward-hack corpus in pods: applied and judged here, tested in the pod', async () => {
      await grading.corpusInImage('k8s', env);
    }, 600_000);
  });
});
