import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { advance, initialProgress, statusLine } from '../../src/ui/progress.js';
import { RecordView } from '../../src/ui/record-view.js';
import { renderRecordSummary } from '../../src/ui/summary.js';

describe('progress', () => {
  it('folds run events into counts, and the live view shows them', () => {
    const p = initialProgress();
    const t0 = 1_000_000;
    advance(p, { type: 'started', run: 'r', gatewayUrl: 'http://x', total: 3, logDir: null }, t0);
    advance(p, { type: 'rollout-start', rolloutId: 'ro_a', taskId: 'a' }, t0);
    advance(p, { type: 'rollout-start', rolloutId: 'ro_b', taskId: 'b' }, t0);
    advance(
      p,
      {
        type: 'call',
        rolloutId: 'ro_a',
        seq: 0,
        status: 'ok',
        error: null,
        promptTokens: 100,
        completionTokens: 20,
        latencyMs: 5,
      },
      t0,
    );
    advance(
      p,
      {
        type: 'call',
        rolloutId: 'ro_b',
        seq: 0,
        status: 'error',
        error: 'x',
        promptTokens: null,
        completionTokens: null,
        latencyMs: 5,
      },
      t0,
    );
    advance(p, { type: 'rollout-end', rolloutId: 'ro_a', taskId: 'a', state: 'succeeded', error: null, reward: 1 }, t0);
    expect(statusLine(p, t0 + 12_000)).toBe(
      '12s · 1/3 done (1 ok, 0 failed) · 1 running · 2 calls (1 errors) · 120 tokens · mean reward 1.000',
    );

    const view = render(
      <RecordView progress={p} finished={[{ id: 'ro_a', taskId: 'a', ok: true, reward: 1, error: null }]} />,
    );
    const frame = view.lastFrame()!;
    expect(frame).toContain('✓ a ro_a reward 1');
    expect(frame).toMatch(/⋯ b ro_b \d+s, 1 calls/);
    expect(frame).toContain('1/3 done (1 ok, 0 failed)');
    view.unmount();
  });

  it('renders the end-of-run summary with a table per task', () => {
    const text = renderRecordSummary({
      run: 'r',
      db: 'x.db',
      rollouts: 2,
      run_rollouts: 5,
      succeeded: 1,
      failed: 1,
      calls: 5,
      error_calls: 0,
      prompt_tokens: 12_000,
      completion_tokens: 300,
      mean_reward: 0.5,
      elapsed_s: 3.2,
      interrupted: false,
      tasks: [{ task_id: 'a', rollouts: 2, succeeded: 1, failed: 1, mean_reward: 0.5, calls: 5 }],
      failures: [{ rollout_id: 'ro_b', task_id: 'a', error: 'timeout' }],
    });
    expect(text).toContain(
      'run r: 2 rollouts, 1 succeeded, 1 failed, 5 calls, 12k prompt + 300 completion tokens, mean reward 0.500, 3.2s',
    );
    expect(text).toMatch(/task\s+rollouts\s+ok\s+failed\s+calls\s+mean reward\na\s+2\s+1\s+1\s+5\s+0\.500/);
    expect(text).toContain('  ro_b a timeout');
    expect(text).toContain('the run now holds 5 rollouts: --run r was used before, and this added to it');
  });
});
