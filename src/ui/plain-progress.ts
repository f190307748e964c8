import type { RunEvent, RunListener } from '../runner/events.js';
import { advance, initialProgress, statusLine } from './progress.js';

/** Progress for logs and pipes: a line per finished rollout and a status line every `everyMs`. */
export function plainProgress(write: (line: string) => void, everyMs = 5000): RunListener & { stop(): void } {
  const p = initialProgress();
  const timer = setInterval(() => write(statusLine(p)), everyMs);
  timer.unref();
  const listener = (event: RunEvent): void => {
    advance(p, event);
    if (event.type === 'started') {
      write(
        `run ${event.run}: ${event.total} rollout(s) through ` +
          `${event.gatewayUrl}${event.logDir ? `; harness logs in ${event.logDir}` : ''}`,
      );
    } else if (event.type === 'rollout-end') {
      const mark = event.state === 'succeeded' ? 'ok  ' : 'FAIL';
      const reward = event.reward === null ? '' : ` reward ${event.reward}`;
      write(`${mark} ${event.taskId ?? '-'} ${event.rolloutId}${reward}${event.error ? ` (${event.error})` : ''}`);
    } else if (event.type === 'stopping') {
      write(`stopping: ${event.reason}; killing harnesses and recording calls in flight`);
    } else if (event.type === 'notice') {
      write(event.message);
    }
  };
  return Object.assign(listener, { stop: () => clearInterval(timer) });
}
