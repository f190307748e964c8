import { ensurePythonEnv, inspectEnv, type EnvReport } from '../src/worker/python-env.js';
import { table } from '../src/ui/summary.js';
import { printJson } from './shared.js';

/** What the torch worker needs, what is there, and the fix for each gap; `--setup` makes the virtualenv. */
export async function doctor(flags: { setup?: boolean; json?: boolean }): Promise<EnvReport> {
  if (flags.setup) ensurePythonEnv((line) => process.stderr.write(`alight: ${line}\n`));
  const report = inspectEnv();
  if (flags.json) printJson(report);
  else {
    process.stdout.write(`system Python with torch: ${report.base ?? 'none'}\nvirtualenv: ${report.venv}${report.python ? '' : ' (not made yet)'}\n\n` +
      `${table(['package', 'version'], report.packages.map((p) => [p.name, p.version ?? 'missing']))}\n` +
      (report.fixes.length ? `\nto fix:\n${report.fixes.map((f) => `  - ${f}`).join('\n')}\n` : '\neverything the torch worker needs is installed\n'));
  }
  return report;
}
