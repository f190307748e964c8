import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const VENV = fileURLToPath(new URL('../../node_modules/.cache/alight-python', import.meta.url));

/** A Python with `packages`, in a virtual environment made (from PyPI) on first use and kept in node_modules/.cache. */
export function pythonWith(packages: string[]): string {
  const python = join(VENV, 'bin', 'python');
  if (!existsSync(python)) execFileSync('python3', ['-m', 'venv', VENV], { stdio: 'inherit' });
  try {
    execFileSync(python, ['-c', packages.map((p) => `import ${p.split(/[=<>]/)[0]}`).join('; ')], { stdio: 'ignore' });
  } catch {
    execFileSync(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...packages], { stdio: 'inherit' });
  }
  return python;
}
