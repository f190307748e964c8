import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { permutation, tasksForStep } from '../../src/algo/schedule.js';
import { backendFor } from '../../src/train/backend-choice.js';
import { plotSvg } from '../../src/ui/plot.js';
import { foldTrain, initialTrainState, sparkline } from '../../src/ui/train-state.js';
import { TrainView } from '../../src/ui/train-view.js';

describe('the backend the flags choose', () => {
  it('takes verl for more than one GPU or node, refuses verl-only flags with torch, and otherwise leaves the config', () => {
    expect(backendFor({ gpus: 8 })).toBe('verl');
    expect(backendFor({ nodes: 2 })).toBe('verl');
    expect(backendFor({ gpus: 1 })).toBeUndefined();
    expect(backendFor({})).toBeUndefined();
    expect(backendFor({ backend: 'torch', gpus: 1 })).toBe('torch');
    expect(backendFor({ backend: 'verl', gpus: 1 })).toBe('verl');
    expect(() => backendFor({ backend: 'torch', gpus: 4, tensorParallel: 2 })).toThrow(
      /--gpus 4, --tensor-parallel: the torch/,
    );
  });
});

describe('the data schedule', () => {
  it('covers every task once per epoch, reshuffled each epoch, the same for the same seed', () => {
    const tasks = ['a', 'b', 'c', 'd', 'e'];
    const steps = Array.from({ length: 5 }, (_, s) => tasksForStep(tasks, 2, s, 7)); // 10 positions: two epochs
    const flat = steps.flat();
    expect(flat.slice(0, 5).sort()).toEqual(tasks);
    expect(flat.slice(5).sort()).toEqual(tasks);
    expect(flat.slice(0, 5)).not.toEqual(flat.slice(5));
    expect(tasksForStep(tasks, 2, 3, 7)).toEqual(steps[3]); // a resumed run asks for step 3 alone and gets the same
    expect(tasksForStep(tasks, 2, 3, 8)).not.toEqual(steps[3]);
    expect(permutation(6, 1).sort()).toEqual([0, 1, 2, 3, 4, 5]);
  });
});

describe('the training view', () => {
  it('folds events into the dashboard: step, phase, rollouts, a reward sparkline and merge-break notes', () => {
    let s = initialTrainState(0);
    s = foldTrain(
      s,
      { type: 'train-started', run: 'r', firstStep: 0, steps: 3, gatewayUrl: 'http://x', workerLog: 'w' },
      0,
    );
    for (const [step, reward, breaks] of [
      [0, 0.1, 0],
      [1, 0.5, 2],
    ]) {
      s = foldTrain(s, { type: 'phase', step, phase: 'rollouts' }, 0);
      s = foldTrain(s, { type: 'rollout-start', rolloutId: 'ro', taskId: 't' }, 0);
      s = foldTrain(
        s,
        {
          type: 'call',
          rolloutId: 'ro',
          seq: 0,
          status: 'ok',
          error: null,
          promptTokens: 5,
          completionTokens: 30,
          latencyMs: 1,
        },
        0,
      );
      s = foldTrain(
        s,
        {
          type: 'rollout-end',
          rolloutId: 'ro',
          taskId: 't',
          state: step ? 'failed' : 'succeeded',
          error: null,
          reward,
        },
        0,
      );
      s = foldTrain(s, { type: 'phase', step, phase: 'update' }, 0);
      s = foldTrain(
        s,
        { type: 'step-end', step, checkpoint: null, metrics: { reward_mean: reward, merge_breaks: breaks, rows: 8 } },
        0,
      );
    }
    expect(s).toMatchObject({
      step: 1,
      phase: 'update',
      rewards: [0.1, 0.5],
      rollouts: { done: 1, failed: 1, running: 0 },
      completionTokens: 30,
    });
    expect(s.notes).toEqual(['step 1: 2 merge breaks (alight samples diagnose --run r)']);
    const view = render(<TrainView state={{ current: s }} />);
    const frame = view.lastFrame()!;
    expect(frame).toContain('run r: step 2/3 · update');
    expect(frame).toContain('rollouts 1 done (1 failed), 0 running');
    expect(frame).toContain(`reward ${sparkline([0.1, 0.5])} 0.500`);
    expect(frame).toContain('step 1: reward 0.500'); // the last finished step, by its own number
    view.unmount();
    expect(sparkline([0, 1, 0.5])).toBe('▁█▅');
  });

  it('plots each series as a polyline in a standalone SVG', () => {
    const svg = plotSvg(
      'run r',
      [0, 1, 2],
      [
        { name: 'reward_mean', values: [0, 0.5, 1] },
        { name: 'loss', values: [1, null, 0] },
      ],
    );
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.match(/<polyline/g)).toHaveLength(2);
    expect(svg).toContain('reward_mean');
    expect(/points="([^"]*)"/.exec(svg)![1].split(' ')).toHaveLength(3);
  });
});
