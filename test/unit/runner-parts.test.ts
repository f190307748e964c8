import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, withOverrides } from '../../src/config/load.js';
import { configSchema } from '../../src/config/schema.js';
import { canTransition, isTerminal, transitions } from '../../src/rollouts/state.js';
import { harnessEnv } from '../../src/runner/env.js';
import { parseReward, runRewardCommand } from '../../src/runner/reward.js';
import { readTasks } from '../../src/runner/tasks.js';
import { substitute } from '../../src/runner/template.js';
import { tempDir } from '../helpers/gateway.js';

describe('rollout state machine', () => {
  it('allows only forward moves and ends in succeeded or failed', () => {
    expect(canTransition('queued', 'running')).toBe(true);
    expect(canTransition('running', 'succeeded')).toBe(true);
    expect(canTransition('succeeded', 'failed')).toBe(false);
    expect(canTransition('running', 'queued')).toBe(false);
    expect(Object.keys(transitions).filter((s) => isTerminal(s as keyof typeof transitions))).toEqual([
      'succeeded',
      'failed',
    ]);
  });
});

describe('reward parsing', () => {
  it('takes the last standalone number', () => {
    expect(parseReward('tests: 3 passed\nreward 0.75\n')).toBe(0.75);
    expect(parseReward('score: -1e-3.')).toBe(-0.001);
    expect(parseReward('graded t2 with v1.2.3')).toBeNull();
    expect(parseReward('')).toBeNull();
  });
});

describe('task files and substitution', () => {
  it('reads ids from id or instance_id and substitutes nested fields', () => {
    const path = join(tempDir(), 't.jsonl');
    writeFileSync(path, '{"instance_id": "django-1", "repo": {"name": "django"}, "n": 3}\n\n{"id": 7}\n');
    const tasks = readTasks(path);
    expect(tasks.map((t) => t.id)).toEqual(['django-1', '7']);
    expect(substitute('--repo={{repo.name}} -n {{ n }} {{repo}}', tasks[0].data)).toBe(
      '--repo=django -n 3 {"name":"django"}',
    );
    expect(() => substitute('{{missing}}', tasks[0].data)).toThrow(/task django-1 has no such field/);
  });
});

describe('harness environment', () => {
  it('sets the contract variables, and nothing else (a pod gets exactly these)', () => {
    const env = harnessEnv({
      gatewayUrl: 'http://127.0.0.1:9',
      token: 'alt_x',
      rolloutId: 'ro_1',
      run: 'r',
      taskId: 't',
      mode: 'record',
      task: { id: 't' },
    });
    expect(env).toEqual({
      OPENAI_BASE_URL: 'http://127.0.0.1:9/r/alt_x/v1',
      OPENAI_API_BASE: 'http://127.0.0.1:9/r/alt_x/v1',
      OPENAI_API_KEY: 'alt_x',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/r/alt_x',
      ANTHROPIC_API_KEY: 'alt_x',
      GOOGLE_GEMINI_BASE_URL: 'http://127.0.0.1:9/r/alt_x',
      GEMINI_API_KEY: 'alt_x',
      ALIGHT_URL: 'http://127.0.0.1:9/r/alt_x',
      ALIGHT_REWARD_URL: 'http://127.0.0.1:9/r/alt_x/reward',
      ALIGHT_EVENT_URL: 'http://127.0.0.1:9/r/alt_x/events',
      ALIGHT_ROLLOUT_ID: 'ro_1',
      ALIGHT_RUN: 'r',
      ALIGHT_TASK_ID: 't',
      ALIGHT_MODE: 'record',
      ALIGHT_TASK_JSON: '{"id":"t"}',
    });
  });
});

describe('config', () => {
  it('validates the init template, applies defaults, and lets flags win', () => {
    const { config } = loadConfig(join(import.meta.dirname, '../../templates/basic/alight.config.yaml'));
    expect(config.upstream).toMatchObject({ url: 'http://127.0.0.1:8000/v1', kind: 'vllm', retries: 3 });
    expect(configSchema.parse({}).gateway).toEqual({
      host: '127.0.0.1',
      port: 0,
      bodyLimitMb: 64,
      cacheRollouts: 512,
      cacheIdleS: 1800,
    });
    const merged = withOverrides(config, { record: { n: 8, concurrency: undefined } });
    expect(merged.record).toMatchObject({ n: 8, concurrency: 4 });
    // The SWE template's config is valid too, and asks for the verl backend on 8 GPUs.
    const swe = loadConfig(join(import.meta.dirname, '../../templates/swe/alight.config.yaml')).config;
    expect(swe.train).toMatchObject({
      backend: 'verl',
      verl: { gpus: 8 },
      fromDb: true,
      optimiser: { isCorrection: 'token' },
    });
  });

  it("reads a file of train's old, flat keys in their groups, and says where each went", () => {
    const path = join(tempDir(), 'alight.config.yaml');
    writeFileSync(path, 'train:\n  lr: 2.0e-6\n  batchSize: 2\n  optimiser:\n    clipHigh: 0.3\n  verl: [a=1]\n');
    const { config, moved } = loadConfig(path);
    expect(config.train).toMatchObject({ optimiser: { lr: 2e-6, clipHigh: 0.3 }, batch: { size: 2 } });
    expect(config.train.verl.overrides).toEqual(['a=1']);
    expect(moved).toEqual([
      'train.lr → train.optimiser.lr',
      'train.batchSize → train.batch.size',
      'train.verl → train.verl.overrides',
    ]);
    // A key that only the object prototype has is no old spelling: the schema names it, as any unknown key.
    writeFileSync(path, 'train:\n  constructor: 1\n');
    expect(() => loadConfig(path)).toThrow(/train: Unrecognized key: "constructor"/);
    // A flag sets its one key of a group; the group's others stay as the file set them.
    const flagged = withOverrides(config, { train: { optimiser: { lr: 1e-5 } } as never });
    expect(flagged.train.optimiser).toMatchObject({ lr: 1e-5, clipHigh: 0.3 });
  });

  it('names every bad key', () => {
    const path = join(tempDir(), 'alight.config.yaml');
    writeFileSync(path, 'upstream:\n  kind: sglang\n  url: not-a-url\nrecord:\n  n: 0\ncolour: blue\n');
    expect(() => loadConfig(path)).toThrow(
      /upstream\.url: Invalid URL\n {2}upstream\.kind: Invalid option[\s\S]*record\.n: Too small[\s\S]*Unrecognized key: "colour"/,
    );
  });
});

describe('reward command', () => {
  const env = { PATH: process.env.PATH };
  it('is not kept alive by a background child holding its stdout, and reads the number after long output', async () => {
    // Were it waited for, the background child would hold it to its 10-minute timeout, past the test's.
    const held = await runRewardCommand('sleep 600 & echo 0.5', env, null, 600_000, new AbortController().signal);
    expect(held).toEqual({ value: 0.5, problem: null });
    const long = await runRewardCommand(
      'head -c 3000000 /dev/zero | tr "\\0" x; echo; echo "reward: 0.25"',
      env,
      null,
      10_000,
      new AbortController().signal,
    );
    expect(long.value).toBe(0.25);
    const none = await runRewardCommand('echo no number; exit 4', env, null, 10_000, new AbortController().signal);
    expect(none).toEqual({ value: null, problem: 'the reward command printed no number (exited with code 4)' });
  });
});
