import type { StepMetrics, TrainEvent, TrainListener } from '../train/events.js';

/** The numbers of a step worth a line. */
export function stepLine(step: number, m: StepMetrics): string {
  const f = (v: number | null | undefined, digits = 3): string =>
    v === null || v === undefined ? '–' : v.toFixed(digits);
  return (
    `step ${step}: reward ${f(m.reward_mean)} ± ${f(m.reward_std)}, pass ${f(m.pass_rate, 2)}` +
    `${m.val_reward !== null && m.val_reward !== undefined ? `, val ${f(m.val_reward)}` : ''}, loss ${f(m.loss, 4)}, ` +
    `grad ${f(m.grad_norm)}, kl ${f(m.kl_rollout, 5)}, entropy ${f(m.entropy)}, ` +
    `${m.rows} rows, ${m.loss_tokens} loss tokens, ` +
    `${m.merge_breaks} breaks, ${m.rollouts_failed} failed, ` +
    `${f(m.step_s, 1)} s (rollouts ${f(m.rollouts_s, 1)}, update ${f(m.update_s, 1)})`
  );
}

/** Training progress for logs and pipes: a line per step, failed rollouts and restarts as they happen. */
export function plainTrainProgress(write: (line: string) => void): TrainListener {
  return (event: TrainEvent): void => {
    if (event.type === 'train-started') {
      write(
        `run ${event.run}: steps ${event.firstStep}…${event.steps - 1} ` +
          `through ${event.gatewayUrl}; worker log ${event.workerLog}`,
      );
    } else if (event.type === 'step-end') {
      write(`${stepLine(event.step, event.metrics)}${event.checkpoint ? `; saved ${event.checkpoint}` : ''}`);
    } else if (event.type === 'rollout-end' && event.state === 'failed') {
      write(`FAIL ${event.taskId ?? '-'} ${event.rolloutId}: ${event.error}`);
    } else if (event.type === 'worker-restart') {
      write(`the worker failed at step ${event.fromStep} (${event.reason}); restarting it from the last checkpoint`);
    } else if (event.type === 'log') {
      write(event.message);
    }
  };
}
