import { ensurePythonEnv, inspectEnv, type EnvReport } from '../src/worker/python-env.js';
import { ensureVerlEnv, inspectVerlEnv, type VerlEnvReport } from '../src/worker/verl-env.js';
import { table } from '../src/ui/summary.js';
import { printJson } from './shared.js';

/** What a backend's worker needs, what is there, and the fix for each gap; `--setup` makes its virtualenv. */
export async function doctor(flags: { setup?: boolean; json?: boolean; backend?: 'torch' | 'verl' }): Promise<EnvReport | VerlEnvReport> {
  const log = (line: string): void => { process.stderr.write(`alight: ${line}\n`); };
  if (flags.backend === 'verl') {
    if (flags.setup) ensureVerlEnv(log);
    const report = inspectVerlEnv();
    render(flags.json, report, `CUDA GPUs: ${report.gpus || 'none'}\nverl virtualenv: ${report.venv}${report.python ? '' : ' (not made yet)'}`,
      report.packages, report.fixes, 'the verl backend');
    return report;
  }
  if (flags.setup) ensurePythonEnv(log);
  const report = inspectEnv();
  render(flags.json, report, `system Python with torch: ${report.base ?? 'none'}\nvirtualenv: ${report.venv}${report.python ? '' : ' (not made yet)'}`,
    report.packages, report.fixes, 'the torch worker');
  return report;
}

function render(json: boolean | undefined, report: object, head: string, packages: { name: string; version: string | null }[], fixes: string[], what: string): void {
  if (json) return printJson(report);
  process.stdout.write(`${head}\n\n${table(['package', 'version'], packages.map((p) => [p.name, p.version ?? 'missing']))}\n` +
    (fixes.length ? `\nto fix:\n${fixes.map((f) => `  - ${f}`).join('\n')}\n` : `\neverything ${what} needs is installed\n`));
}
