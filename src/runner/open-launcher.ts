import type { Config, GatewayConfig, RunnerKind } from '../config/schema.js';
import { startGateway } from '../gateway/server.js';
import type { Store } from '../store/store.js';
import { withheldVars } from './env.js';
import type { RunListener } from './events.js';
import { localLauncher, type RunLauncher } from './launcher.js';
import { startPoolLauncher } from './pool-launcher.js';
import type { RunSession } from './run-rollouts.js';

type Opener = (config: Config, notice: (message: string) => void) => Promise<RunLauncher>;

// The Kubernetes client takes a second to load: only a run that uses it pays for it.
const openers: Record<RunnerKind, Opener> = {
  local: async () => ({ ...localLauncher, gatewayHost: null, close: async () => {} }),
  pool: async () => startPoolLauncher(),
  k8s: async (config, notice) => (await import('../k8s/job-launcher.js')).startK8sLauncher(config, notice),
};

export function openLauncher(config: Config, notice: (message: string) => void): Promise<RunLauncher> {
  return openers[config.runner](config, notice);
}

/** The gateway's settings for a launcher: bound where its harnesses reach it. */
export function gatewayFor(config: Config, launcher: RunLauncher): GatewayConfig {
  return launcher.gatewayHost ? { ...config.gateway, host: launcher.gatewayHost } : config.gateway;
}

/** What `throughGateway` needs of a run. */
export interface GatewayRun {
  store: Store;
  config: Config;
  run: string;
  adminKey: string;
  /** The upstream API key (from the variable the config names): sent upstream, never stored. */
  upstreamApiKey?: string;
  onEvent: RunListener;
  signal: AbortSignal;
  /** For the `started` event: how many rollouts, and where their logs go. */
  total: number;
  logDir: string | null;
}

/**
 * A run's harnesses through a recording gateway: the run's launcher opened (the Kubernetes one first deletes what killed
 * runs left), the gateway bound where its harnesses reach it, then `work` with the run's session; the gateway closed, then the
 * launcher (which deletes what is left of the run's Jobs), however `work` ended.
 */
export async function throughGateway<T>(o: GatewayRun, work: (session: RunSession) => Promise<T>): Promise<T> {
  const launcher = await openLauncher(o.config, (message) => o.onEvent({ type: 'notice', message }));
  try {
    const gateway = await startGateway({
      store: o.store,
      gateway: gatewayFor(o.config, launcher),
      upstream: o.config.upstream,
      adminKey: o.adminKey,
      upstreamApiKey: o.upstreamApiKey,
      onCall: (call) => o.onEvent({ type: 'call', ...call }),
    });
    o.onEvent({ type: 'started', run: o.run, gatewayUrl: gateway.url, total: o.total, logDir: o.logDir });
    try {
      const { store, run, onEvent, signal } = o;
      return await work({ store, gateway, launcher, run, signal, onEvent, withhold: withheldVars(o.config.upstream) });
    } finally {
      await gateway.close();
    }
  } finally {
    await launcher.close();
  }
}
