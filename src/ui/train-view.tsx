import { Box, render, Text } from 'ink';
import { useEffect, useState } from 'react';
import type { TrainEvent, TrainListener } from '../train/events.js';
import { stepLine } from './train-progress.js';
import { foldTrain, initialTrainState, sparkline, type TrainState } from './train-state.js';

export function TrainView({ state, refreshMs = 250 }: { state: { current: TrainState }; refreshMs?: number }) {
  const [, setTick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setTick((t) => t + 1), refreshMs);
    return () => clearInterval(timer);
  }, [refreshMs]);
  const s = state.current;
  const seconds = Math.max((Date.now() - s.stepStarted) / 1000, 0.001);
  return (
    <Box flexDirection="column">
      <Text bold>
        run {s.run}: step {s.step + 1}/{s.steps} · {s.phase}
      </Text>
      <Text>
        rollouts {s.rollouts.done} done ({s.rollouts.failed} failed), {s.rollouts.running} running ·{' '}
        {(s.completionTokens / seconds).toFixed(0)} tokens/s
      </Text>
      <Text>
        reward <Text color="cyan">{sparkline(s.rewards)}</Text>{' '}
        {s.rewards.length ? s.rewards[s.rewards.length - 1].toFixed(3) : ''}
      </Text>
      {s.last ? <Text dimColor>{stepLine(s.last.step, s.last.metrics)}</Text> : null}
      {s.notes.map((n, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: notes are only appended, so an index names one note for good
        <Text key={i} color="yellow">
          {n}
        </Text>
      ))}
    </Box>
  );
}

/** The live dashboard on a TTY; `stop` renders the last frame and unmounts. */
export function liveTrainView(): TrainListener & { stop(): Promise<void> } {
  const state = { current: initialTrainState() };
  const instance = render(<TrainView state={state} />, { exitOnCtrlC: false, patchConsole: false });
  const listener = (event: TrainEvent): void => {
    state.current = foldTrain(state.current, event);
  };
  return Object.assign(listener, {
    async stop() {
      instance.rerender(<TrainView state={state} />);
      instance.unmount();
      await instance.waitUntilExit();
    },
  });
}
