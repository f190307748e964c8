import type { RunEvent } from '../runner/events.js';

export interface Progress {
  run: string;
  total: number;
  running: Map<string, { taskId: string | null; since: number; calls: number }>;
  succeeded: number;
  failed: number;
  calls: number;
  errorCalls: number;
  tokens: number;
  rewards: number[];
  startedAt: number;
}

export function initialProgress(): Progress {
  return {
    run: '',
    total: 0,
    running: new Map(),
    succeeded: 0,
    failed: 0,
    calls: 0,
    errorCalls: 0,
    tokens: 0,
    rewards: [],
    startedAt: Date.now(),
  };
}

/** Folds one event into the progress both renderers show (mutates and returns `p`). */
export function advance(p: Progress, event: RunEvent, now = Date.now()): Progress {
  switch (event.type) {
    case 'started':
      Object.assign(p, { run: event.run, total: event.total, startedAt: now });
      break;
    case 'rollout-start':
      p.running.set(event.rolloutId, { taskId: event.taskId, since: now, calls: 0 });
      break;
    case 'rollout-end':
      p.running.delete(event.rolloutId);
      if (event.state === 'succeeded') p.succeeded++;
      else p.failed++;
      if (event.reward !== null) p.rewards.push(event.reward);
      break;
    case 'call': {
      p.calls++;
      if (event.status !== 'ok') p.errorCalls++;
      p.tokens += (event.promptTokens ?? 0) + (event.completionTokens ?? 0);
      const r = p.running.get(event.rolloutId);
      if (r) r.calls++;
      break;
    }
    case 'stopping':
    case 'notice':
      break;
  }
  return p;
}

export function meanReward(p: Progress): number | null {
  return p.rewards.length ? p.rewards.reduce((a, b) => a + b, 0) / p.rewards.length : null;
}

export function formatCount(n: number): string {
  return n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e4 ? `${Math.round(n / 1e3)}k` : String(n);
}

export function statusLine(p: Progress, now = Date.now()): string {
  const done = p.succeeded + p.failed;
  const reward = meanReward(p);
  return [
    `${Math.round((now - p.startedAt) / 1000)}s`,
    `${done}/${p.total} done (${p.succeeded} ok, ${p.failed} failed)`,
    `${p.running.size} running`,
    `${p.calls} calls${p.errorCalls ? ` (${p.errorCalls} errors)` : ''}`,
    `${formatCount(p.tokens)} tokens`,
    `mean reward ${reward === null ? '–' : reward.toFixed(3)}`,
  ].join(' · ');
}
