import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../package-root.js';
import { AlightError, ExitCode } from '../errors.js';

export const PYTHON_DIR = join(packageRoot, 'python');
const TORCH_FIX = 'install PyTorch for a system Python: `sudo apt-get install --no-install-recommends python3-torch libopenblas0-pthread` ' +
  '(Debian/Ubuntu, CPU, ~160 MB), or `pip install torch` for the python3 on PATH (https://pytorch.org for CPU-only wheels)';

/** Where alight keeps its virtualenv: ALIGHT_PYTHON_ENV, else ~/.cache/alight/python. */
export function envDir(): string {
  return process.env.ALIGHT_PYTHON_ENV ?? join(homedir(), '.cache', 'alight', 'python');
}

export interface Package { name: string; version: string | null }
export interface EnvReport {
  /** The system Python with torch that the virtualenv is made from; null when none has torch. */
  base: string | null;
  venv: string;
  python: string | null;
  packages: Package[];
  missing: string[];
  fixes: string[];
}

const wanted = ['torch', 'numpy', 'transformers', 'safetensors', 'tokenizers'];

/** What is installed and what is missing, with the command that fixes each gap. Starts nothing, installs nothing. */
export function inspectEnv(): EnvReport {
  const venv = envDir();
  const python = join(venv, 'bin', 'python');
  const base = basePython();
  const packages = versions(existsSync(python) ? python : base, wanted);
  const missing = packages.filter((p) => p.version === null).map((p) => p.name);
  const fixes: string[] = [];
  if (!base) fixes.push(TORCH_FIX);
  if (!existsSync(python)) fixes.push(`alight doctor --setup (makes ${venv} from ${base ?? 'a Python with torch'} and installs python/requirements.txt)`);
  else if (missing.some((m) => m !== 'torch' && m !== 'numpy')) fixes.push(`alight doctor --setup (pip installs python/requirements.txt into ${venv})`);
  return { base, venv, python: existsSync(python) ? python : null, packages, missing, fixes };
}

/**
 * The virtualenv's python, made and filled when needed: a venv over a system Python that has torch (so a distro's
 * torch is reused, not downloaded), with python/requirements.txt (and `extra` requirement files) pip-installed.
 * pip honours PIP_FIND_LINKS / PIP_NO_INDEX, so a wheel cache works offline.
 */
export function ensurePythonEnv(log: (line: string) => void, extra: string[] = []): string {
  const venv = envDir();
  const python = join(venv, 'bin', 'python');
  if (!existsSync(python)) {
    const base = basePython();
    if (!base) throw new AlightError(`no Python with torch found (tried /usr/bin/python3, python3): ${TORCH_FIX}`, ExitCode.failure);
    log(`making a virtualenv in ${venv} over ${base}`);
    run(base, ['-m', 'venv', '--system-site-packages', venv]);
  }
  const files = ['requirements.txt', ...extra].map((f) => join(PYTHON_DIR, f));
  // Not --quiet: that hides the "Would install" line this reads.
  const check = spawnSync(python, ['-m', 'pip', 'install', '--dry-run', '--disable-pip-version-check', '--no-index', ...files.flatMap((f) => ['-r', f])], { encoding: 'utf8' });
  if (check.status !== 0 || /Would install/.test(check.stdout)) {
    log(`installing ${files.map((f) => f.slice(PYTHON_DIR.length + 1)).join(', ')} into ${venv}`);
    run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...files.flatMap((f) => ['-r', f])]);
  }
  return python;
}

function basePython(): string | null {
  for (const candidate of ['/usr/bin/python3', 'python3']) {
    if (spawnSync(candidate, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0) return candidate;
  }
  return null;
}

export function versions(python: string | null, names: string[]): Package[] {
  if (!python) return names.map((name) => ({ name, version: null }));
  const script = `import importlib.metadata as m, json\nout = {}\nfor n in ${JSON.stringify(names)}:\n  try: out[n] = m.version(n)\n  except Exception: out[n] = None\nprint(json.dumps(out))`;
  const found = JSON.parse(execFileSync(python, ['-c', script], { encoding: 'utf8' })) as Record<string, string | null>;
  return names.map((name) => ({ name, version: found[name] }));
}

export function run(cmd: string, args: string[]): void {
  const res = spawnSync(cmd, args, { encoding: 'utf8' });
  if (res.status !== 0) {
    throw new AlightError(`${cmd} ${args.join(' ')} failed:\n${(res.stderr || res.stdout).trim().split('\n').slice(-8).join('\n')}\n` +
      'without network, point pip at a wheel cache: PIP_NO_INDEX=1 PIP_FIND_LINKS=<folder of wheels>', ExitCode.failure);
  }
}
