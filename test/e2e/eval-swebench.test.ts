import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Prediction } from '../../src/eval/grade/grade-types.js';
import { Store } from '../../src/store/store.js';
import { alight, BIN, FIXTURES, readJsonl } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { makeSweRepo } from '../helpers/swe-repo.js';

describe('alight eval swebench', () => {
  it('runs a file-editing harness on the real local model ' +
    'per instance, grades every diff, links the traces', async () => {
    const root = tempDir();
    const fx = makeSweRepo(root);
    const actions = { fix: 'resolved', wrong: 'unresolved', nothing: 'empty_patch', crash: 'error' } as const;
    const tasks = join(root, 'eval-tasks.jsonl');
    writeFileSync(
      tasks,
      Object.keys(actions)
        .map((action, i) =>
          JSON.stringify({ ...fx.instance, instance_id: `acme__calc-${i + 1}`, harness_action: action }),
        )
        .join('\n'),
    );
    const db = join(root, 'alight.db');
    const out = join(root, 'eval');
    const evaluate = (...extra: string[]) =>
      alight(
        [
          'eval',
          'swebench',
          '--tasks',
          tasks,
          '--repos',
          fx.repos,
          '--serve',
          'gemma3-270m',
          '--run',
          'ev',
          '--db',
          db,
          '--out',
          out,
          '--concurrency',
          '2',
          '--json',
          ...extra,
          '--',
          process.execPath,
          join(FIXTURES, 'swe-harness.mjs'),
        ],
        { timeoutMs: 240_000 },
      );
    // Two instances first; then all four under the same run id: only the two not done yet run.
    const part = await evaluate('--instances', 'acme__calc-1,acme__calc-3');
    expect(part.code, part.stderr).toBe(0);
    expect(JSON.parse(part.stdout)).toMatchObject({
      total_instances: 2,
      resolved_ids: ['acme__calc-1'],
      empty_patch_ids: ['acme__calc-3'],
    });
    const res = await evaluate();
    expect(res.code, res.stderr).toBe(0);
    const summary = JSON.parse(res.stdout);
    expect(summary).toMatchObject({
      schema_version: 2,
      total_instances: 4,
      submitted_instances: 4,
      resolved_ids: ['acme__calc-1'],
      unresolved_ids: ['acme__calc-2'],
      empty_patch_ids: ['acme__calc-3'],
      error_ids: ['acme__calc-4'],
    });
    const predictions = readJsonl<Prediction>(join(out, 'predictions.jsonl'));
    const fixed = predictions.find((p) => p.instance_id === 'acme__calc-1')?.model_patch;
    expect(fixed).toContain('+    return a + b');
    // the model's words, through the gateway, in the patch
    expect(fixed).toMatch(/\+\+\+ b\/NOTES\.md\n@@ -0,0 \+1(,\d+)? @@\n\+model said: /);
    expect(predictions.find((p) => p.instance_id === 'acme__calc-3')?.model_patch).toBe('');
    const store = Store.open(db);
    const rollouts = store.rolloutSummaries({ run: 'ev' });
    store.close();
    expect(rollouts.map((r) => [r.task_id, r.mode, r.calls, r.prompt_tokens > 0]).sort()).toEqual(
      ['acme__calc-1', 'acme__calc-2', 'acme__calc-3', 'acme__calc-4'].map((id) => [id, 'val', 1, true]),
    );
    expect(rollouts.find((r) => r.task_id === 'acme__calc-4')!.error).toMatch(/exited with code 2/);
  }, 240_000);

  it('Ctrl-C keeps every finished attempt (graded and saved); the same --run does only the rest', async () => {
    const root = tempDir();
    const fx = makeSweRepo(root);
    const tasks = join(root, 'tasks.jsonl');
    writeFileSync(
      tasks,
      ['fix', 'slow']
        .map((action, i) =>
          JSON.stringify({ ...fx.instance, instance_id: `acme__calc-${i + 1}`, harness_action: action }),
        )
        .join('\n'),
    );
    const db = join(root, 'alight.db');
    const out = join(root, 'eval');
    const args = [
      BIN,
      'eval',
      'swebench',
      '--tasks',
      tasks,
      '--repos',
      fx.repos,
      '--serve',
      'gemma3-270m',
      '--run',
      'ctrlc',
      '--db',
      db,
      '--out',
      out,
      '--concurrency',
      '1',
      '--json',
      '--',
      process.execPath,
      join(FIXTURES, 'swe-harness.mjs'),
    ];
    const slowDir = tempDir();
    const child = spawn(process.execPath, args, {
      env: { ...process.env, ALIGHT_TEST_SLOW_DIR: slowDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    // One worker: the slow harness starting means the first attempt's harness is done.
    const started = Date.now();
    while (!existsSync(join(slowDir, 'acme__calc-2.started'))) {
      expect(Date.now() - started, stderr).toBeLessThan(120_000);
      await new Promise((r) => setTimeout(r, 200));
    }
    child.kill('SIGINT');
    expect(await exited, stderr).toBe(130);
    expect(stderr).toMatch(/interrupted: finished attempts are saved; run again with --run ctrlc/);
    expect(readdirSync(join(out, 'attempts'))).toEqual(['acme__calc-1.0.json']);
    expect(JSON.parse(readFileSync(join(out, 'attempts', 'acme__calc-1.0.json'), 'utf8')).report.status).toBe(
      'resolved',
    );

    const res = await alight(args.slice(1), { timeoutMs: 240_000 });
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({
      total_instances: 2,
      resolved_ids: ['acme__calc-1', 'acme__calc-2'],
    });
    const store = Store.open(db);
    const rollouts = store.rolloutSummaries({ run: 'ctrlc' });
    store.close();
    // The first instance ran once; the second twice (interrupted, then done).
    expect(rollouts.map((r) => [r.task_id, r.error === 'interrupted' ? 'interrupted' : r.state]).sort()).toEqual([
      ['acme__calc-1', 'succeeded'],
      ['acme__calc-2', 'interrupted'],
      ['acme__calc-2', 'succeeded'],
    ]);
  }, 300_000);
});
