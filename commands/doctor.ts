import { type Check, checkUpstream } from '../src/doctor/upstream.js';
import { AlightError, ExitCode } from '../src/errors.js';
import { ensurePythonEnv, inspectEnv } from '../src/setup/python-env.js';
import { ensureVerlEnv, inspectVerlEnv } from '../src/setup/verl-env.js';
import { ensureVllm } from '../src/setup/vllm-env.js';
import { setupProgress } from '../src/ui/setup-progress.js';
import { table } from '../src/ui/summary.js';
import { printJson } from './shared.js';

export interface DoctorFlags {
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
