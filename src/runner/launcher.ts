import { run } from '../process/launch.js';
import { type RewardResult, runRewardCommand } from './reward.js';

export { abortReason } from '../process/launch.js';

/** One harness run, as the rollout runner asks for it from its launcher. */
export interface ProcessSpec {
  command: string;
  args: string[];
  /** What alight adds to the harness's environment (the harness contract, the job's own variables). */
  env: Record<string, string>;
  /** Variables of this process's environment the harness must not see (a local harness inherits the rest). */
  withhold: string[];
  /** The working folder on this machine (the local launcher's; a pod starts where its image or template says). */
  cwd?: string;
  /** The image to run in (the Kubernetes launcher's; default: its configured one). */
  image?: string;
  /** `inherit` attaches the terminal (`stdout-to-stderr` keeps our stdout clean for --json); else these files. */
  output: ProcessOutput;
  timeoutMs: number | null;
  signal: AbortSignal;
  /** Run after the harness (whatever its exit code, unless it was stopped); the last number it prints is the reward. */
  rewardCmd?: string;
  /** The rollout this run is: a remote launcher names and labels its work with it. */
  rollout?: { id: string; run: string; taskId: string | null; task: Record<string, unknown> | null };
}

export type ProcessOutput = 'inherit' | 'stdout-to-stderr' | { stdout: string; stderr: string };

export interface ProcessResult {
  exitCode: number | null;
  /**
   * Why it ended other than by exiting: `timeout`, the abort's reason (`interrupted` for Ctrl-C), a signal name, or a
   * start error.
   */
  reason: string | null;
  /** The failure was the infrastructure's (an image pull, an eviction), not the harness's: worth another attempt. */
  infra?: boolean;
  /** The reward command's result, when there was one and the harness ended by itself. */
  reward?: RewardResult;
}

/**
 * Where the runner's harnesses run. The runner knows only this: the local one below starts them on this machine; the
 * Kubernetes one (src/k8s/job-launcher.ts) runs each as a Job.
 */
export interface Launcher {
  readonly name: string;
  run(spec: ProcessSpec): Promise<ProcessResult>;
  /** Times a rollout whose failure was the infrastructure's is run again. */
  readonly infraRetries?: number;
}

/** A run's launcher: opened when the run starts, closed when it ends however it ends. */
export interface RunLauncher extends Launcher {
  /** The address the gateway must bind to for the harnesses to reach it (null: the configured one). */
  readonly gatewayHost: string | null;
  /** The Kubernetes one deletes what is left of the run's Jobs. */
  close(): Promise<void>;
}

// The harness gets this long to exit after SIGTERM before SIGKILL.
export const killGraceMs = 3000;

/**
 * This machine: each harness in its own process group (unless it shares the terminal), so that a timeout or Ctrl-C
 * ends everything it started, not just the direct child; then the reward command, in a group of its own too.
 */
export const localLauncher: Launcher = {
  name: 'local',
  async run(spec) {
    const files = typeof spec.output === 'string' ? null : spec.output;
    const env = localEnv(spec);
    const result = await run({
      command: spec.command,
      args: spec.args,
      env,
      cwd: spec.cwd,
      stdin: files ? 'ignore' : 'inherit',
      stdout: files ? { file: files.stdout } : spec.output === 'stdout-to-stderr' ? 'stderr' : 'inherit',
      stderr: files ? { file: files.stderr } : 'inherit',
      group: files !== null,
      timeoutMs: spec.timeoutMs,
      signal: spec.signal,
      killGraceMs,
    });
    return { exitCode: result.exitCode, reason: result.reason, reward: await rewardAfter(spec, result, files) };
  },
};

/** The reward command's result, run on this machine once the harness ended by itself (none otherwise). */
export async function rewardAfter(
  spec: ProcessSpec,
  ended: { reason: string | null },
  files: { stdout: string; stderr: string } | null,
): Promise<RewardResult | undefined> {
  if (ended.reason !== null || !spec.rewardCmd) return undefined;
  return runRewardCommand(spec.rewardCmd, localEnv(spec), files, spec.timeoutMs, spec.signal);
}

/** This process's environment without the withheld variables, plus alight's. */
export function localEnv(spec: Pick<ProcessSpec, 'env' | 'withhold'>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of spec.withhold) delete env[name];
  return Object.assign(env, spec.env);
}
