import { Box, render, Static, Text } from 'ink';
import { useEffect, useState } from 'react';
import type { RunEvent, RunListener } from '../runner/events.js';
import { advance, initialProgress, type Progress, statusLine } from './progress.js';

interface Finished {
  id: string;
  taskId: string | null;
  ok: boolean;
  reward: number | null;
  error: string | null;
}

export function RecordView({
  progress,
  finished,
  refreshMs = 250,
}: {
  progress: Progress;
  finished: Finished[];
  refreshMs?: number;
}) {
  const [, setTick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setTick((t) => t + 1), refreshMs);
    return () => clearInterval(timer);
  }, [refreshMs]);
  const now = Date.now();
  return (
    <>
      <Static items={[...finished]}>
        {(f) => (
          <Text key={f.id} color={f.ok ? 'green' : 'red'}>
            {f.ok ? '✓' : '✗'} {f.taskId ?? '-'} <Text dimColor>{f.id}</Text>
            {f.reward !== null ? ` reward ${f.reward}` : ''}
            {f.error ? ` ${f.error}` : ''}
          </Text>
        )}
      </Static>
      <Box flexDirection="column" marginTop={1}>
        {[...progress.running].slice(0, 8).map(([id, r]) => (
          <Text key={id} color="yellow">
            ⋯ {r.taskId ?? '-'} <Text dimColor>{id}</Text> {Math.round((now - r.since) / 1000)}s, {r.calls} calls
          </Text>
        ))}
        {progress.running.size > 8 ? <Text dimColor>… and {progress.running.size - 8} more running</Text> : null}
        <Text bold>{statusLine(progress, now)}</Text>
      </Box>
    </>
  );
}

/** The live terminal view of a run; `stop` unmounts it after the last frame. */
export function liveProgress(): RunListener & { stop(): Promise<void> } {
  const progress = initialProgress();
  const finished: Finished[] = [];
  const instance = render(<RecordView progress={progress} finished={finished} />, {
    exitOnCtrlC: false,
    patchConsole: false,
  });
  const listener = (event: RunEvent): void => {
    advance(progress, event);
    if (event.type === 'rollout-end') {
      finished.push({
        id: event.rolloutId,
        taskId: event.taskId,
        ok: event.state === 'succeeded',
        reward: event.reward,
        error: event.error,
      });
    }
  };
  return Object.assign(listener, {
    async stop() {
      instance.rerender(<RecordView progress={progress} finished={finished} />);
      instance.unmount();
      await instance.waitUntilExit();
    },
  });
}
