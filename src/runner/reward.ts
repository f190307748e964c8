import { run } from '../process/launch.js';

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

/** The reward from a command's output; `how` says how the command ended when it printed no number. */
export function rewardFrom(stdout: string, how: string): RewardResult {
  const value = parseReward(stdout);
  return value !== null
    ? { value, problem: null }
    : { value: null, problem: `the reward command printed no number (${how})` };
}

// The reward is the last number printed: its tail is enough.
const stdoutTail = 64 * 1024;

/**
 * The reward command on this machine, in the harness's environment, its stderr in the harness's log. Its own process
 * group: a background child holding its stdout must not keep it alive.
 */
export async function runRewardCommand(
  command: string,
  env: NodeJS.ProcessEnv,
  files: { stderr: string } | null,
  timeoutMs: number | null,
  signal: AbortSignal,
): Promise<RewardResult> {
  const result = await run({
    command: 'sh',
    args: ['-c', command],
    env,
    stdin: 'ignore',
    stdout: { tail: stdoutTail },
    stderr: files ? { file: files.stderr } : 'inherit',
    group: true,
    timeoutMs,
    signal,
    killGraceMs: 3000,
  });
  return rewardFrom(result.stdout, result.reason ?? `exited with code ${result.exitCode}`);
}
