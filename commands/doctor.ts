import { loadConfig } from '../src/config/load.js';
import { type Check, checkUpstream } from '../src/doctor/upstream.js';
import { AlightError, ExitCode } from '../src/errors.js';
import type { K8sReport } from '../src/k8s/doctor.js';
import { ensurePythonEnv, inspectEnv } from '../src/setup/python-env.js';
import { ensureVerlEnv, inspectVerlEnv } from '../src/setup/verl-env.js';
import { ensureVllm } from '../src/setup/vllm-env.js';
import { setupProgress } from '../src/ui/setup-progress.js';
import { table } from '../src/ui/summary.js';
import { printJson, type RunnerFlags, withRunner } from './shared.js';

export interface DoctorFlags extends Omit<RunnerFlags, 'runner'> {
  runner?: 'k8s';
  config?: string;
  setup?: boolean;
  vllm?: boolean;
  json?: boolean;
  backend?: 'torch' | 'verl';
  upstream?: string;
  upstreamKeyEnv?: string;
}

/**
 * What a backend needs, what is there, and the fix for each gap; `--setup` installs it (`--vllm`: vLLM's CPU build
 * too). `--upstream URL` checks a vLLM the user runs: what training needs of it.
 */
export async function doctor(flags: DoctorFlags): Promise<object> {
  if (flags.vllm && !flags.setup)
    throw new AlightError('--vllm goes with --setup (alight doctor lists vLLM without it)', ExitCode.usage);
  if (flags.upstream) return doctorUpstream(flags.upstream, flags);
  if (flags.runner === 'k8s') return doctorK8s(flags);
  const listener = setupProgress();
  if (flags.backend === 'verl') {
    if (flags.setup) await ensureVerlEnv(listener);
    const report = inspectVerlEnv();
    render(
      flags.json,
      report,
      `CUDA GPUs: ${report.gpus || 'none'}\nverl virtualenv: ${report.venv}${report.python ? '' : ' (not made yet)'}`,
      report.packages,
      report.fixes,
      'the verl backend',
    );
    return report;
  }
  if (flags.setup) await (flags.vllm ? ensureVllm('cpu', listener) : ensurePythonEnv(listener));
  const report = inspectEnv();
  render(
    flags.json,
    report,
    `Python environment: ${report.venv}${report.python ? '' : ' (not made yet)'}`,
    report.packages,
    report.fixes,
    'the torch worker and vLLM on CPU',
  );
  return report;
}

async function doctorUpstream(url: string, flags: DoctorFlags): Promise<{ url: string; checks: Check[] }> {
  const keyEnv = flags.upstreamKeyEnv;
  if (keyEnv && !process.env[keyEnv])
    throw new AlightError(`--upstream-key-env names ${keyEnv}, which is not set`, ExitCode.usage);
  const checks = await checkUpstream(url, keyEnv ? process.env[keyEnv] : undefined);
  const report = { url, checks };
  if (flags.json) printJson(report);
  else
    process.stdout.write(
      `${url}\n\n${table(
        ['check', 'result', ''],
        checks.map((c) => [c.name, c.ok === null ? '?' : c.ok ? 'ok' : 'FAIL', c.detail]),
      )}\n`,
    );
  if (checks.some((c) => c.ok === false))
    throw new AlightError(`${url} lacks what training needs (see above)`, ExitCode.failure);
  return report;
}

async function doctorK8s(flags: DoctorFlags): Promise<K8sReport> {
  const config = withRunner(loadConfig(flags.config).config, { ...flags, runner: 'k8s' });
  const { checkCluster } = await import('../src/k8s/doctor.js');
  const report = await checkCluster(config);
  if (flags.json) printJson(report);
  else {
    const where = report.context ? `context ${report.context}, namespace ${report.namespace}\n\n` : '';
    const rows = report.checks.map((c) => [c.name, c.ok === null ? '?' : c.ok ? 'ok' : 'FAIL', c.detail]);
    process.stdout.write(`${where}${table(['check', 'result', ''], rows)}\n`);
    if (report.checks.some((c) => c.ok === false))
      process.stdout.write(`\nthe permissions the runner needs, as a Role (kubectl apply -f):\n\n${report.role}`);
  }
  if (report.checks.some((c) => c.ok === false))
    throw new AlightError('the cluster is not ready for --runner k8s (see above)', ExitCode.failure);
  return report;
}

function render(
  json: boolean | undefined,
  report: object,
  head: string,
  packages: { name: string; version: string | null }[],
  fixes: string[],
  what: string,
): void {
  if (json) {
    printJson(report);
    return;
  }
  process.stdout.write(
    `${head}\n\n${table(
      ['package', 'version'],
      packages.map((p) => [p.name, p.version ?? 'missing']),
    )}\n` +
      (fixes.length
        ? `\nto fix:\n${fixes.map((f) => `  - ${f}`).join('\n')}\n`
        : `\neverything needed for ${what} is installed\n`),
  );
}
