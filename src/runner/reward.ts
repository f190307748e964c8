import type { Launcher, ProcessOutput } from './process.js';

export interface RewardResult {
  value: number | null;
  /** Why there is no reward, when there is none. */
  problem: string | null;
}

// A number standing on its own: the 2 in `t2` or `v1.2.3` is not a reward.
const numberPattern = /(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?!\w|\.\d)/g;

/** The reward is the last number the command prints on stdout, whatever its exit code. */
export function parseReward(stdout: string): number | null {
  const matches = stdout.match(numberPattern);
  if (!matches) return null;
  const value = Number(matches[matches.length - 1]);
  return Number.isFinite(value) ? value : null;
}

export async function runRewardCommand(
  launcher: Launcher,
  command: string,
  env: NodeJS.ProcessEnv,
  output: ProcessOutput,
  timeoutMs: number | null,
  signal: AbortSignal,
): Promise<RewardResult> {
  const result = await launcher.run({
    command: 'sh',
    args: ['-c', command],
    env,
    output,
    timeoutMs,
    signal,
    captureStdout: true,
  });
  const value = parseReward(result.stdout);
  if (value !== null) return { value, problem: null };
  const how = result.reason ?? `exited with code ${result.exitCode}`;
  return { value: null, problem: `the reward command printed no number (${how})` };
}
