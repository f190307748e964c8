import type { StepMetrics, TrainEvent, TrainListener } from '../train/events.js';
import type { SftEvent } from '../train/sft.js';

/** The numbers of a step worth a line. */
export function stepLine(step: number, m: StepMetrics): string {
  const f = (v: number | null | undefined, digits = 3): string =>
    v === null || v === undefined ? '–' : v.toFixed(digits);
  return (
    `step ${step}: reward ${f(m.reward_mean)} ± ${f(m.reward_std)}, pass ${f(m.pass_rate, 2)}` +
    `${m.val_reward !== null && m.val_reward !== undefined ? `, val ${f(m.val_reward)}` : ''}, loss ${f(m.loss, 4)}, ` +
    `grad ${f(m.grad_norm)}, kl ${f(m.kl_rollout, 5)}, entropy ${f(m.entropy)}, ` +
    `${m.teacher_kl !== undefined ? `teacher kl ${f(m.teacher_kl)} (${f(m.teacher_s, 1)} s), ` : ''}` +
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

/** `alight sft`'s progress: a line per step (its loss, and the validation loss where measured). */
export function plainSftProgress(write: (line: string) => void): (event: SftEvent) => void {
  return (event) => {
    if (event.type === 'sft-started')
      write(`run ${event.run}: ${event.steps} steps over ${event.examples} examples; worker log ${event.workerLog}`);
    else if (event.type === 'log') write(event.message);
    else {
      const m = event.metrics;
      const val = typeof m.val_loss === 'number' ? `, val loss ${m.val_loss.toFixed(4)}` : '';
      // verl's trainer reports tokens, not rows, and no update time: what a backend does not say is left out.
      const counts = [
        m.rows !== undefined && `${m.rows} rows`,
        m.loss_tokens !== undefined && `${m.loss_tokens} loss tokens`,
        m.global_tokens !== undefined && `${m.global_tokens} tokens`,
        typeof m.update_s === 'number' && `${m.update_s.toFixed(1)} s`,
      ].filter(Boolean);
      write(
        `step ${event.step} (epoch ${m.epoch}): loss ${m.loss?.toFixed(4)}${val}, grad ${m.grad_norm?.toFixed(3)}, ` +
          counts.join(', ') +
          (event.checkpoint ? `; saved ${event.checkpoint}` : ''),
      );
    }
  };
}
