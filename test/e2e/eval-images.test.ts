import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Prediction } from '../../src/eval/grade/grade-types.js';
import { Store } from '../../src/store/store.js';
import { alight, FIXTURES, readJsonl } from '../helpers/cli.js';
import { dockerCli } from '../helpers/docker-cli.js';
import { tempDir } from '../helpers/gateway.js';
import { instanceGrading } from '../helpers/instance-grading.js';
import { fixtureImage } from '../helpers/instance-image.js';
import { makeSweRepo } from '../helpers/swe-repo.js';
import { swebenchPython } from '../helpers/swebench-python.js';

// SWE-bench's own layout: each instance an image with its repository at /testbed. Agents work in a container of it
// (no --repos), predictions are graded in a fresh one, network off, by podman (and the docker CLI) on this machine.
describe('eval with instance images', () => {
  const root = tempDir();
  const fx = makeSweRepo(root);
  const image = fixtureImage(fx, 'acme_calc');
  afterAll(() => {
    execFileSync('podman', ['rmi', '-f', image], { stdio: 'ignore' });
  });
  const { tasks, grade, gradeAllCases, corpusInImage } = instanceGrading(root, fx, image);

  /**
   * `eval swebench --runtime R` on three instances whose harness (working through `R exec`) fixes, breaks or leaves the
   * code.
   */
  const evalInContainers = async (runtime: 'podman' | 'docker', env?: NodeJS.ProcessEnv) => {
    const actions = ['fix', 'wrong', 'nothing'];
    const file = tasks(actions.map((action, i) => ({ instance_id: `acme__calc-${i + 1}`, harness_action: action })));
    const db = join(root, `${runtime}.db`);
    const out = join(root, `eval-${runtime}`);
    const res = await alight(
      [
        'eval',
        'swebench',
        '--tasks',
        file,
        '--runtime',
        runtime,
        '--serve',
        'gemma3-270m',
        '--run',
        `evi-${runtime}`,
        '--db',
        db,
        '--out',
        out,
        '--concurrency',
        '2',
        '--json',
        '--',
        process.execPath,
        join(FIXTURES, 'swe-container-harness.mjs'),
      ],
      { timeoutMs: 300_000, env },
    );
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({
      total_instances: 3,
      resolved_ids: ['acme__calc-1'],
      unresolved_ids: ['acme__calc-2', 'acme__calc-3'],
      empty_patch_ids: [],
      error_ids: [],
    });
    const predictions = readJsonl<Prediction>(join(out, 'predictions.jsonl'));
    const fixed = predictions.find((p) => p.instance_id === 'acme__calc-1')?.model_patch;
    expect(fixed).toContain('+    return a + b');
    // the model's words, through the gateway
    expect(fixed).toMatch(/\+\+\+ b\/NOTES\.md\n@@ -0,0 \+1(,\d+)? @@\n\+model said: /);
    const store = Store.open(db);
    const rollouts = store.rolloutSummaries({ run: `evi-${runtime}` });
    store.close();
    expect(rollouts.map((r) => [r.task_id, r.state, r.calls]).sort()).toEqual([
      ['acme__calc-1', 'succeeded', 1],
      ['acme__calc-2', 'succeeded', 1],
      ['acme__calc-3', 'succeeded', 1],
    ]);
    const left = execFileSync(runtime, ['ps', '-a', '--format', '{{.Names}}'], {
      encoding: 'utf8',
      env: { ...process.env, ...env },
    });
    expect(left).not.toMatch(new RegExp(`alight-agent-evi-${runtime}`)); // every agent container removed
  };

  it(
    'grades every prediction in the instance image as the local grader does (guards included)',
    () => gradeAllCases('podman'),
    300_000,
  );

  it(
    'refuses the reward-hack corpus in the instance image: applied and judged here, tested in the image',
    () => corpusInImage('podman'),
    300_000,
  );

  it("runs a row's own eval_script (SWE-bench v5 shape, official " +
    "parser name) and records the test exit status, not the script's", async () => {
    const script = [
      '#!/bin/bash',
      'set -uxo pipefail',
      'cd /testbed',
      `git checkout ${fx.base} tests/test_calc.py`,
      `git apply -v - <<'EOF_1'\n${fx.instance.test_patch}\nEOF_1`,
      ": '>>>>> Start Test Output'",
      'python3 -m pytest -rA tests/test_calc.py',
      ": '>>>>> End Test Output'",
      `git checkout ${fx.base} tests/test_calc.py`,
    ].join('\n');
    const rows = [
      { instance_id: 'v5-gold', eval_script: script, log_parser: 'parse_log_pytest', test_cmd: undefined },
      { instance_id: 'v5-wrong', eval_script: script, log_parser: 'parse_log_pytest', test_cmd: undefined },
    ];
    const { reports, out } = await grade(
      rows,
      { 'v5-gold': fx.instance.patch, 'v5-wrong': fx.predictions.wrong.patch },
      ['--grader', 'podman'],
    );
    expect(reports['v5-gold'].status, JSON.stringify(reports['v5-gold'])).toBe('resolved');
    expect(reports['v5-wrong'].status).toBe('unresolved');
    expect(readFileSync(join(out, 'v5-wrong', 'test_output.txt'), 'utf8')).toMatch(/>>>>> Test Exit Code: 1\n$/);
  }, 300_000);

  it('data validate --grader podman: verdicts from the instance image; an image that does not exist is named', async () => {
    const db = join(root, 'validate.db');
    const file = tasks([
      { instance_id: 'acme__calc-1' },
      { instance_id: 'acme__calc-2', patch: fx.predictions.wrong.patch, problem_statement: 'the gold patch is wrong' },
      {
        instance_id: 'acme__calc-3',
        image: 'localhost/alight-test/none:1',
        problem_statement: 'no image for this one',
      },
    ]);
    expect((await alight(['data', 'import', file, '--db', db])).code).toBe(0);
    const res = await alight(['data', 'validate', '--grader', 'podman', '--workers', '2', '--db', db, '--json'], {
      timeoutMs: 300_000,
    });
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout).byVerdict).toEqual({ valid: 1, 'gold-unresolved': 1, 'image-missing': 1 });
  }, 300_000);

  it('eval swebench --runtime podman: the harness works in a container ' +
    'with no future history; diffs graded in fresh containers', async () => {
    await evalInContainers('podman');
  }, 300_000);

  // What speaks Docker's API as a Docker user runs it: the real docker CLI and the official harness, against podman's
  // Docker-compatible service (always: the images are in podman's storage, whatever engine the machine has).
  describe("through Docker's API", () => {
    let docker: Awaited<ReturnType<typeof dockerCli>>;
    beforeAll(async () => {
      docker = await dockerCli();
    }, 300_000);
    afterAll(() => docker?.stop());
    it(
      'grades every prediction in the instance image (the docker CLI, --grader docker)',
      () => gradeAllCases('docker', docker.env),
      300_000,
    );
    it(
      'refuses the reward-hack corpus in the instance image with the docker CLI',
      () => corpusInImage('docker', docker.env),
      300_000,
    );
    it(
      'eval swebench --runtime docker (the docker CLI): agents in docker containers, graded in fresh ones',
      () => evalInContainers('docker', docker.env),
      300_000,
    );

    it('the swebench grader: the official package grades the guarded predictions in the instance images', async () => {
      const cases = ['gold', 'wrong', 'conftest'] as const;
      const { reports, out } = await grade(
        cases.map((name) => ({ instance_id: `official-${name}` })),
        Object.fromEntries(cases.map((name) => [`official-${name}`, fx.predictions[name].patch])),
        ['--grader', 'swebench'],
        { ALIGHT_SWEBENCH_PYTHON: swebenchPython(), ...docker.env },
      );
      expect(
        cases.map((name) => [reports[`official-${name}`].status, reports[`official-${name}`].guard.length]),
      ).toEqual([
        ['resolved', 0],
        ['unresolved', 0],
        ['unresolved', 1],
      ]);
      expect(readFileSync(join(out, 'swebench', 'run_evaluation.log'), 'utf8')).toMatch(/Instances resolved: 1\b/);
      const row = JSON.parse(readFileSync(join(out, 'swebench', 'dataset.jsonl'), 'utf8').split('\n')[0]);
      expect(row).toMatchObject({ image, log_parser: 'parse_log_pytest', eval_type: 'pass_and_fail' });
    }, 300_000);
  });
});
