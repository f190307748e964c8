import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { buildJob, type JobPlan, jobName, labelValue } from '../../src/k8s/job-spec.js';
import { fillTemplate, loadJobTemplate } from '../../src/k8s/job-template.js';
import { judge } from '../../src/k8s/outcome.js';
import { tempDir } from '../helpers/gateway.js';

const settings = configSchema.parse({}).k8s;
const plan = (over: Partial<JobPlan> = {}): JobPlan => ({
  namespace: 'rl',
  rolloutId: 'ro_00ff',
  run: 'my run/1',
  taskId: 'django__django-11099',
  session: 'host-1234',
  owner: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', name: 'alight-host-1234', uid: 'u1' },
  image: 'img:1',
  command: 'python',
  args: ['agent.py', '--task', 'x'],
  env: { OPENAI_API_KEY: 'alt_tok', ALIGHT_TASK_ID: 'django__django-11099' },
  deadlineS: 600,
  settings,
  template: null,
  ...over,
});

describe('the Job of a rollout', () => {
  it("sets alight's fields: name, labels, one attempt, no restarts, the deadline, the TTL, the owner, no token", () => {
    const job = buildJob(plan());
    expect(job.metadata).toMatchObject({
      name: 'alight-ro-00ff',
      namespace: 'rl',
      labels: {
        'app.kubernetes.io/managed-by': 'alight',
        'alight.dev/run': 'my_run_1',
        'alight.dev/rollout': 'ro_00ff',
        'alight.dev/task': 'django__django-11099',
        'alight.dev/session': 'host-1234',
      },
      annotations: { 'alight.dev/run': 'my run/1' },
      ownerReferences: [{ kind: 'Lease', name: 'alight-host-1234', uid: 'u1' }],
    });
    expect(job.spec).toMatchObject({ backoffLimit: 0, activeDeadlineSeconds: 600, ttlSecondsAfterFinished: 600 });
    const pod = job.spec!.template.spec!;
    expect(pod).toMatchObject({
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
    });
    expect(job.spec!.template.metadata!.labels!['alight.dev/rollout']).toBe('ro_00ff');
    expect(pod.containers[0]).toMatchObject({
      name: 'harness',
      image: 'img:1',
      command: ['python'],
      args: ['agent.py', '--task', 'x'],
    });
    expect(pod.containers[0].env).toEqual([
      { name: 'OPENAI_API_KEY', value: 'alt_tok' },
      { name: 'ALIGHT_TASK_ID', value: 'django__django-11099' },
    ]);
  });

  it('runs the reward command after the harness in the same container, its output the termination message', () => {
    const c = buildJob(plan({ rewardCmd: 'python grade.py' })).spec!.template.spec!.containers[0];
    expect(c.command).toEqual([
      '/bin/sh',
      '-c',
      expect.stringContaining('/dev/termination-log'),
      'alight-harness',
      'python',
    ]);
    expect(c.args).toEqual(['agent.py', '--task', 'x']);
    expect(c.env).toContainEqual({ name: 'ALIGHT_REWARD_CMD', value: 'python grade.py' });
    expect(c.terminationMessagePolicy).toBe('File');
  });

  it("lays alight's fields over a user's template, keeping its volumes, sidecars and settings", () => {
    const template: V1Job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { labels: { team: 'rl' } },
      spec: {
        backoffLimit: 6,
        template: {
          spec: {
            serviceAccountName: 'agent',
            volumes: [{ name: 'repo', emptyDir: {} }],
            tolerations: [{ key: 'gpu', operator: 'Exists' }],
            containers: [
              { name: 'proxy', image: 'envoy' },
              {
                name: 'harness',
                image: 'base:1',
                env: [
                  { name: 'OPENAI_API_KEY', value: 'leaked' },
                  { name: 'KEEP', value: '1' },
                ],
              },
            ],
          },
        },
      },
    };
    const s = {
      ...settings,
      tolerations: [{ key: 'spot', operator: 'Exists' }],
      resources: { limits: { memory: '4Gi' } },
    };
    const job = buildJob(plan({ template, image: undefined, settings: s }));
    const pod = job.spec!.template.spec!;
    expect(job.metadata!.labels).toMatchObject({ team: 'rl', 'alight.dev/rollout': 'ro_00ff' });
    expect(job.spec!.backoffLimit).toBe(0);
    expect(pod.volumes).toEqual([{ name: 'repo', emptyDir: {} }]);
    expect(pod.tolerations).toEqual([
      { key: 'gpu', operator: 'Exists' },
      { key: 'spot', operator: 'Exists' },
    ]);
    // A named service account keeps its token (the user asked for it).
    expect(pod.automountServiceAccountToken).toBeUndefined();
    expect(pod.containers[0]).toEqual({ name: 'proxy', image: 'envoy' });
    expect(pod.containers[1].image).toBe('base:1');
    expect(pod.containers[1].resources).toEqual({ limits: { memory: '4Gi' } });
    // alight's variables win over the template's; the template's others stay.
    expect(pod.containers[1].env).toEqual([
      { name: 'KEEP', value: '1' },
      { name: 'OPENAI_API_KEY', value: 'alt_tok' },
      { name: 'ALIGHT_TASK_ID', value: 'django__django-11099' },
    ]);
  });

  it('names and labels within Kubernetes limits', () => {
    expect(jobName('ro_ABcd')).toBe('alight-ro-abcd');
    expect(labelValue('-a/b c_')).toBe('a_b_c');
    expect(labelValue('x'.repeat(80))).toHaveLength(63);
  });
});

describe('a Job template file', () => {
  const write = (text: string) => {
    const path = join(tempDir(), 'job.yaml');
    writeFileSync(path, text);
    return path;
  };
  const good =
    'apiVersion: batch/v1\nkind: Job\nspec:\n  template:\n    spec:\n      containers:\n        - name: harness\n          image: "{{image_name}}"\n          workingDir: /testbed\n';

  it('fills {{field}}s after parsing, so task text never becomes YAML structure', () => {
    const job = loadJobTemplate(write(good));
    const filled = fillTemplate(job, { image_name: 'x:1"\n  hostNetwork: true' });
    expect(filled.spec!.template.spec!.containers[0].image).toBe('x:1"\n  hostNetwork: true');
    expect(filled.spec!.template.spec!.hostNetwork).toBeUndefined();
    expect(() => fillTemplate(job, {})).toThrow(/uses \{\{image_name\}\} but task undefined has no such field/);
  });

  it('refuses anything but exactly one Job with named containers', () => {
    expect(() => loadJobTemplate(write(`${good}---\n${good}`))).toThrow(/exactly one YAML document \(it has 2\)/);
    expect(() => loadJobTemplate(write('apiVersion: v1\nkind: Pod\n'))).toThrow(/must be a Job/);
    expect(() => loadJobTemplate(write('apiVersion: batch/v1\nkind: Job\nspec: {}\n'))).toThrow(
      /at least one container/,
    );
    expect(() => loadJobTemplate(write('a: [1'))).toThrow(/not valid YAML/);
    expect(() => loadJobTemplate('/nonexistent/job.yaml')).toThrow(/cannot read the Job template/);
  });
});

describe('how a Job ended', () => {
  const t0 = Date.parse('2026-12-01T10:00:00Z');
  const job = (conditions: { type: string; status: string; reason?: string }[] = []): V1Job => ({
    metadata: { creationTimestamp: new Date(t0) },
    status: { conditions: conditions as never },
  });
  const pod = (status: object): V1Pod => ({ metadata: { creationTimestamp: new Date(t0) }, status }) as V1Pod;
  const c = (state: object) => ({ containerStatuses: [{ name: 'harness', state }] });
  const at = (s: number) => t0 + s * 1000;

  it('reads exits, OOM, the deadline and lost pods', () => {
    expect(judge(job(), pod(c({ running: {} })), 'harness', at(5), 60_000)).toBeNull();
    expect(judge(job(), pod(c({ terminated: { exitCode: 0, message: '0.5' } })), 'harness', at(5), 60_000)).toEqual({
      exitCode: 0,
      reason: null,
      infra: false,
      message: '0.5',
    });
    expect(
      judge(job(), pod(c({ terminated: { exitCode: 137, reason: 'OOMKilled' } })), 'harness', at(5), 60_000),
    ).toMatchObject({
      exitCode: 137,
      reason: expect.stringMatching(/^OOMKilled/),
      infra: false,
    });
    const deadline = job([{ type: 'FailureTarget', status: 'True', reason: 'DeadlineExceeded' }]);
    expect(judge(deadline, pod(c({ terminated: { exitCode: 137 } })), 'harness', at(5), 60_000)?.reason).toBe(
      'timeout',
    );
    const evicted = pod({
      phase: 'Failed',
      reason: 'Evicted',
      message: 'low on memory',
      ...c({ terminated: { exitCode: 137 } }),
    });
    expect(judge(job(), evicted, 'harness', at(5), 60_000)).toMatchObject({
      reason: 'Evicted: low on memory',
      infra: true,
    });
  });

  it("waits a while for the pod's last status after the Job's end, and reads deletions and a Job with no pod", () => {
    const complete = (s: number) =>
      job([{ type: 'Complete', status: 'True', lastTransitionTime: new Date(at(s)) } as never]);
    expect(judge(complete(5), pod(c({ running: {} })), 'harness', at(8), 60_000)).toBeNull();
    expect(judge(complete(5), pod(c({ running: {} })), 'harness', at(16), 60_000)).toMatchObject({ exitCode: 0 });
    expect(judge(job(), undefined, 'harness', at(30), 60_000)).toBeNull();
    expect(judge(job(), undefined, 'harness', at(61), 60_000)?.reason).toMatch(/^no pod after 60 s/);
    const deleting = { ...job(), metadata: { creationTimestamp: new Date(t0), deletionTimestamp: new Date(at(3)) } };
    expect(judge(deleting, pod(c({ running: {} })), 'harness', at(5), 60_000)).toMatchObject({ infra: true });
    // A pod deleted under its harness: someone else's doing, unless the Job's deadline shows up meanwhile.
    const podGoing = { ...pod(c({ running: {} })), metadata: { deletionTimestamp: new Date(at(3)) } };
    expect(judge(job(), podGoing, 'harness', at(5), 60_000)).toBeNull();
    const deadline = job([{ type: 'FailureTarget', status: 'True', reason: 'DeadlineExceeded' }]);
    expect(judge(deadline, podGoing, 'harness', at(6), 60_000)?.reason).toBe('timeout');
    expect(judge(job(), podGoing, 'harness', at(13), 60_000)).toMatchObject({ infra: true });
  });

  it('waits out the pending limit for a pull error or an unschedulable pod, not for an image that cannot come', () => {
    const pulling = pod(c({ waiting: { reason: 'ImagePullBackOff', message: 'no such host' } }));
    expect(judge(job(), pulling, 'harness', at(10), 60_000)).toBeNull();
    expect(judge(job(), pulling, 'harness', at(61), 60_000)).toMatchObject({
      reason: 'ImagePullBackOff: no such host',
      infra: true,
    });
    const never = pod(c({ waiting: { reason: 'ErrImageNeverPull' } }));
    expect(judge(job(), never, 'harness', at(1), 60_000)).toMatchObject({ infra: true });
    const unschedulable = pod({
      conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes: cpu' }],
    });
    expect(judge(job(), unschedulable, 'harness', at(30), 60_000)).toBeNull();
    expect(judge(job(), unschedulable, 'harness', at(60), 60_000)).toMatchObject({
      reason: 'Unschedulable: 0/3 nodes: cpu',
      infra: true,
    });
    const secret = pod(c({ waiting: { reason: 'CreateContainerConfigError', message: 'secret "x" not found' } }));
    expect(judge(job(), secret, 'harness', at(61), 60_000)).toMatchObject({ infra: false });
  });
});
