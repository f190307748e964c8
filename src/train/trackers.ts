import { appendFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { learningRate, type TrainConfig, type trackerKinds } from '../config/train-schema.js';
import { start } from '../process/launch.js';
import { isRecord } from '../records.js';
import { asLines, type SetupListener } from '../setup/events.js';
import { ensureRequirements, PYTHON_DIR } from '../setup/python-env.js';
import type { StoredCall } from '../store/calls.js';
import type { Store } from '../store/store.js';
import type { StepMetrics } from './events.js';

export type TrackerKind = (typeof trackerKinds)[number];

/** A few of a step's trajectories, as the trackers' sample tables show them. */
export interface Sample {
  prompt: string;
  answer: string;
  reward: number | null;
}

export interface Trackers {
  step(step: number, metrics: StepMetrics, samples: Sample[]): void;
  /** Ends the trackers' process once it has written everything (a minute at most). */
  close(): Promise<void>;
}

/**
 * The trackers' virtualenv (their libraries only, no torch; ~360 MB), made when first needed: ALIGHT_TRACKERS_ENV, else
 * ~/.cache/alight/trackers. Returns its python.
 */
export function ensureTrackersEnv(listener: SetupListener): Promise<string> {
  const venv = process.env.ALIGHT_TRACKERS_ENV ?? join(homedir(), '.cache', 'alight', 'trackers');
  return ensureRequirements(venv, 'trackers', ['requirements-trackers.txt'], listener);
}

/**
 * A training run's trackers (`train.schedule.reportTo`), none when it names none: told the settings as run (the
 * learning rate the update uses, not the undefined of "the default") and `extra`, one dotted key per setting
 * (`optimiser.lr`, as MLflow's flat params need), their problems and set-up going to `log`.
 */
export async function runTrackers(
  c: TrainConfig,
  run: { runDir: string; run: string },
  log: (message: string) => void,
  extra: Record<string, unknown> = {},
): Promise<Trackers | null> {
  if (!c.schedule.reportTo.length) return null;
  return openTrackers({
    kinds: c.schedule.reportTo,
    ...run,
    settings: { ...dotted({ ...c, optimiser: { ...c.optimiser, lr: learningRate(c) } }), ...extra },
    onProblem: log,
    listener: asLines(log),
  });
}

/** Nested settings as one level of dotted keys; a list is one value. */
function dotted(settings: object, prefix = ''): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(settings).flatMap(([key, value]) =>
      isRecord(value) ? Object.entries(dotted(value, `${prefix}${key}.`)) : [[`${prefix}${key}`, value]],
    ),
  );
}

/**
 * The trackers `--report-to` names, written by their own libraries in a Python process of their own
 * (python/alight_trackers): a tracker that fails is reported through `onProblem` and left out, and a dead process is
 * reported once; training never waits on them. Their output goes to `<runDir>/trackers.log`.
 */
export async function openTrackers(o: {
  kinds: TrackerKind[];
  runDir: string;
  run: string;
  settings: Record<string, unknown>;
  onProblem: (message: string) => void;
  listener: SetupListener;
}): Promise<Trackers> {
  const python = await ensureTrackersEnv(o.listener);
  const log = join(o.runDir, 'trackers.log');
  const proc = start({
    command: python,
    args: ['-m', 'alight_trackers', o.runDir, ...new Set(o.kinds)],
    cwd: PYTHON_DIR,
    // A group of its own: Ctrl-C at the terminal stops training, and the trackers still close their runs after it.
    group: true,
    stdin: 'pipe',
    stdout: { file: log },
    stderr: {
      lines: (line) => {
        appendFileSync(log, `${line}\n`);
        if (line.startsWith('tracker ')) o.onProblem(`${line} (left out from now on; log: ${log})`);
      },
    },
  });
  let gone = false;
  void proc.exit.then((how) => {
    gone = true;
    if (!closing) o.onProblem(`the trackers' process ${how} (log: ${log}); training goes on without them`);
  });
  let closing = false;
  const send = (msg: object): void => {
    if (!gone) proc.stdin?.write(`${JSON.stringify(msg)}\n`);
  };
  send({ kind: 'start', run: o.run, settings: o.settings });
  return {
    step: (step, metrics, samples) => send({ kind: 'step', step, metrics, samples }),
    async close() {
      closing = true;
      proc.stdin?.end();
      const timer = setTimeout(() => void proc.stop('the trackers took over a minute to close'), 60_000);
      await proc.finished;
      clearTimeout(timer);
    },
  };
}

/** Up to `limit` train rollouts of the run that ended after `since` (ms): each one's last prompt, answer and reward. */
export function recentSamples(store: Store, run: string, since: number, limit = 4): Sample[] {
  return store.rolloutSummaries({ run, mode: 'train', endedAfter: since, limit }).map((r) => {
    const last = store.calls.list(r.id).at(-1);
    return { ...(last ? exchange(last) : { prompt: '', answer: '' }), reward: r.reward };
  });
}

/** A call's last input message (or prompt) and its answer's text, cut to 2,000 characters each. */
function exchange(call: StoredCall): { prompt: string; answer: string } {
  const cut = (s: unknown): string => (typeof s === 'string' ? s : JSON.stringify(s ?? '')).slice(0, 2000);
  const messages = call.request.messages as { content?: unknown }[] | undefined;
  const prompt = messages ? messages.at(-1)?.content : call.request.prompt;
  const choice = (call.response?.choices as { message?: { content?: unknown }; text?: unknown }[] | undefined)?.[0];
  return { prompt: cut(prompt), answer: cut(choice?.message?.content ?? choice?.text) };
}
