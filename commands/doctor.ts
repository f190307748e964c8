import { loadConfig } from '../src/config/load.js';
import { type Check, checkUpstream } from '../src/doctor/upstream.js';
import { AlightError, ExitCode } from '../src/errors.js';
import type { K8sReport } from '../src/k8s/doctor.js';
import { ensurePythonEnv, inspectEnv } from '../src/setup/python-env.js';
import { ensureVerlEnv, inspectVerlEnv } from '../src/setup/verl-env.js';
import { ensureVllm } from '../src/setup/vllm-env.js';
import { renderCluster, renderTorchEnv, renderUpstream, renderVerlEnv } from '../src/ui/doctor-report.js';
import { setupProgress } from '../src/ui/setup-progress.js';
import { printJson, withRunner } from './shared.js';
import type { DoctorFlags } from './table/declared-setup.js';

/**
 * What a backend needs, what is there, and the fix for each gap; `--setup` installs it (`--vllm`: vLLM's CPU build
 * too). `--upstream URL` checks a vLLM the user runs: what training needs of it.
 */
export async function doctor(flags: DoctorFlags): Promise<object> {
  if (flags.upstream) return doctorUpstream(flags.upstream, flags);
  if (flags.runner === 'k8s') return doctorK8s(flags);
  const listener = setupProgress();
  if (flags.backend === 'verl') {
    if (flags.setup) await ensureVerlEnv(listener);
    return say(flags.json, inspectVerlEnv(), renderVerlEnv);
  }
  if (flags.setup) await (flags.vllm ? ensureVllm('cpu', listener) : ensurePythonEnv(listener));
  return say(flags.json, inspectEnv(), renderTorchEnv);
}

async function doctorUpstream(url: string, flags: DoctorFlags): Promise<{ url: string; checks: Check[] }> {
  const keyEnv = flags.upstreamKeyEnv;
  if (keyEnv && !process.env[keyEnv])
    throw new AlightError(`--upstream-key-env names ${keyEnv}, which is not set`, ExitCode.usage);
  const checks = await checkUpstream(url, keyEnv ? process.env[keyEnv] : undefined);
  const report = { url, checks };
  say(flags.json, report, renderUpstream);
  if (checks.some((c) => c.ok === false))
    throw new AlightError(`${url} lacks what training needs (see above)`, ExitCode.failure);
  return report;
}

async function doctorK8s(flags: DoctorFlags): Promise<K8sReport> {
  const config = withRunner(loadConfig(flags.config).config, { ...flags, runner: 'k8s' });
  const { checkCluster } = await import('../src/k8s/doctor.js');
  const report = await checkCluster(config);
  say(flags.json, report, renderCluster);
  if (report.checks.some((c) => c.ok === false))
    throw new AlightError('the cluster is not ready for --runner k8s (see above)', ExitCode.failure);
  return report;
}

/** The report as JSON, or as the text its renderer makes of it. */
function say<R extends object>(json: boolean | undefined, report: R, render: (report: R) => string): R {
  if (json) printJson(report);
  else process.stdout.write(render(report));
  return report;
}
