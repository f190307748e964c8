import type { Check } from '../doctor/upstream.js';
import type { K8sReport } from '../k8s/doctor.js';
import type { EnvReport, Package } from '../setup/python-env.js';
import type { VerlEnvReport } from '../setup/verl-env.js';
import { table } from './summary.js';

const checksTable = (checks: Check[]): string =>
  table(
    ['check', 'result', ''],
    checks.map((c) => [c.name, c.ok === null ? '?' : c.ok ? 'ok' : 'FAIL', c.detail]),
  );

/** `alight doctor --upstream URL`: what training needs of the upstream, checked. */
export const renderUpstream = (r: { url: string; checks: Check[] }): string => `${r.url}\n\n${checksTable(r.checks)}\n`;

/** `alight doctor --runner k8s`: the cluster's checks and, when one fails, the Role that grants what is missing. */
export function renderCluster(report: K8sReport): string {
  const where = report.context ? `context ${report.context}, namespace ${report.namespace}\n\n` : '';
  return (
    `${where}${checksTable(report.checks)}\n` +
    (report.checks.some((c) => c.ok === false)
      ? `\nthe permissions the runner needs, as a Role (kubectl apply -f):\n\n${report.role}`
      : '')
  );
}

export const renderTorchEnv = (r: EnvReport): string =>
  envReport(`Python environment: ${r.venv}${r.python ? '' : ' (not made yet)'}`, r, 'the torch worker and vLLM on CPU');

export const renderVerlEnv = (r: VerlEnvReport): string =>
  envReport(
    `CUDA GPUs: ${r.gpus || 'none'}\nverl virtualenv: ${r.venv}${r.python ? '' : ' (not made yet)'}`,
    r,
    'the verl backend',
  );

/** A backend's packages and their versions, then the fixes for what is missing or that nothing is. */
function envReport(head: string, r: { packages: Package[]; fixes: string[] }, what: string): string {
  return (
    `${head}\n\n${table(
      ['package', 'version'],
      r.packages.map((p) => [p.name, p.version ?? 'missing']),
    )}\n` +
    (r.fixes.length
      ? `\nto fix:\n${r.fixes.map((f) => `  - ${f}`).join('\n')}\n`
      : `\neverything needed for ${what} is installed\n`)
  );
}
