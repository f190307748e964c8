import type { Config, GatewayConfig, RunnerKind } from '../config/schema.js';
import { type Launcher, localLauncher } from './process.js';

/** A run's launcher: opened when the run starts, closed when it ends however it ends. */
export interface RunLauncher extends Launcher {
  /** The address the gateway must bind to for the harnesses to reach it (null: the configured one). */
  readonly gatewayHost: string | null;
  /** The Kubernetes one deletes what is left of the run's Jobs. */
  close(): Promise<void>;
}

type Opener = (config: Config, notice: (message: string) => void) => Promise<RunLauncher>;

// The Kubernetes client takes a second to load: only a run that uses it pays for it.
const openers: Record<RunnerKind, Opener> = {
  local: async () => ({ ...localLauncher, gatewayHost: null, close: async () => {} }),
  k8s: async (config, notice) => (await import('../k8s/launcher.js')).startK8sLauncher(config, notice),
};

export function openLauncher(config: Config, notice: (message: string) => void): Promise<RunLauncher> {
  return openers[config.runner](config, notice);
}

/** The gateway's settings for a launcher: bound where its harnesses reach it. */
export function gatewayFor(config: Config, launcher: RunLauncher): GatewayConfig {
  return launcher.gatewayHost ? { ...config.gateway, host: launcher.gatewayHost } : config.gateway;
}
