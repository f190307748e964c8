import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { AlightError, ExitCode } from '../errors.js';
import { packageRoot } from '../package-root.js';
import { probe } from '../process/launch.js';
import { runInstall } from './command.js';
import type { SetupListener } from './events.js';
import { withLock } from './lock.js';
import { ensureSystemPackages } from './system.js';

export const PYTHON_DIR = join(packageRoot, 'python');
export const OFFLINE_HINT =
  'without network, point pip at a wheel folder: PIP_NO_INDEX=1 PIP_FIND_LINKS=<folder of wheels>';

/**
 * alight's Python environment (the torch worker, the tiny models, vLLM on CPU): ALIGHT_PYTHON_ENV, else
 * ~/.cache/alight/python.
 */
export function envDir(): string {
  return process.env.ALIGHT_PYTHON_ENV ?? join(homedir(), '.cache', 'alight', 'python');
}

export function envPython(venv = envDir()): string {
  return join(venv, 'bin', 'python');
}

export interface Package {
  name: string;
  version: string | null;
}

/** Installed versions of `names` for `python` (all null without one). */
export function versions(python: string | null, names: string[]): Package[] {
  if (!python || !existsSync(python)) return names.map((name) => ({ name, version: null }));
  const script =
    `import importlib.metadata as m, json\nout = {}\nfor n in ${JSON.stringify(names)}:\n` +
    '  try: out[n] = m.version(n)\n  except Exception: out[n] = None\nprint(json.dumps(out))';
  const res = probe(python, ['-c', script]);
  if (res.exitCode !== 0)
    throw new AlightError(
      `${python} could not list its packages: ${res.startError ?? res.stderr.trim()}`,
      ExitCode.failure,
    );
  const found = JSON.parse(res.stdout) as Record<string, string | null>;
  return names.map((name) => ({ name, version: found[name] }));
}

/** The python3 that virtualenvs are made from: python3 on PATH, 3.10 or newer (torch's floor). */
export function basePython(): string {
  const res = probe('python3', ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])']);
  if (res.exitCode !== 0)
    throw new AlightError(
      'alight needs Python 3.10 or newer as python3 on PATH (https://www.python.org, or your package manager)',
      ExitCode.failure,
    );
  const [major, minor] = res.stdout.trim().split('.').map(Number);
  if (major < 3 || (major === 3 && minor < 10))
    throw new AlightError(`python3 is ${res.stdout.trim()}; alight needs 3.10 or newer`, ExitCode.failure);
  return 'python3';
}

/**
 * A virtualenv at `venv`: made where there is none (Debian's python3 needs python3-venv for that, installed when it
 * can be), adopted where one exists (a folder with pyvenv.cfg: never wiped). Its pip is brought up to date, so that
 * it reports download progress.
 */
export async function ensureVenv(venv: string, listener: SetupListener): Promise<string> {
  const made = join(venv, '.alight-venv');
  if (existsSync(made)) return envPython(venv);
  const base = basePython();
  if (!existsSync(join(venv, 'pyvenv.cfg'))) {
    if (existsSync(venv) && readdirSync(venv).length > 0) {
      throw new AlightError(
        `${venv} exists and is not a virtualenv: remove it, or ` +
          'point alight elsewhere (ALIGHT_PYTHON_ENV, ALIGHT_VERL_ENV)',
        ExitCode.failure,
      );
    }
    const venvModule = () => probe(base, ['-c', 'import venv, ensurepip']).exitCode === 0;
    await ensureSystemPackages([{ pkg: 'python3-venv', present: venvModule }], 'a Python virtualenv', listener);
    listener({ type: 'step', message: `making a virtualenv in ${venv}` });
    await runInstall(base, ['-m', 'venv', venv], listener, OFFLINE_HINT);
  }
  await runInstall(
    envPython(venv),
    ['-m', 'pip', 'install', '--disable-pip-version-check', '--quiet', '--upgrade', 'pip'],
    listener,
    OFFLINE_HINT,
  );
  writeFileSync(made, '');
  return envPython(venv);
}

/**
 * Whether `python`'s pip can print raw download progress (pip 24.1 and later; an offline folder may hold an older one).
 */
function rawProgress(python: string): boolean {
  const res = probe(python, ['-m', 'pip', '--version']);
  const [major, minor] = (/^pip (\d+)\.(\d+)/.exec(res.stdout) ?? []).slice(1).map(Number);
  return major > 24 || (major === 24 && minor >= 1);
}

/** pip install with progress lines that the listener turns into bars. */
export function pip(python: string, args: string[], listener: SetupListener): Promise<void> {
  const progress = rawProgress(python) ? ['--progress-bar', 'raw'] : [];
  return runInstall(
    python,
    ['-m', 'pip', 'install', '--disable-pip-version-check', ...progress, ...args],
    listener,
    OFFLINE_HINT,
  );
}

/** A stamp of what was installed: the requirement files' contents and the pins installed before them. */
function stampOf(files: string[], pins: string): string {
  const hash = createHash('sha256').update(pins);
  for (const f of files) hash.update(f).update(readFileSync(join(PYTHON_DIR, f)));
  return hash.digest('hex').slice(0, 16);
}

/**
 * Installs the requirement files `files` (under python/) into `venv` unless the same files are installed already
 * (a stamp per set in the virtualenv); `before` runs first and installs `pins` (what must precede the rest).
 */
export async function ensureRequirements(
  venv: string,
  name: string,
  files: string[],
  listener: SetupListener,
  before: { pins: string; install(python: string): Promise<void> } | null = null,
): Promise<string> {
  const stampFile = join(venv, `.alight-${name}`);
  const stamp = stampOf(files, before?.pins ?? '');
  const done = (): boolean => existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp;
  if (done()) return envPython(venv);
  return withLock(venv, listener, async () => {
    const python = await ensureVenv(venv, listener);
    if (done()) return python; // another alight installed it while this one waited
    listener({ type: 'step', message: `installing ${files.join(', ')} into ${venv}` });
    await before?.install(python);
    await pip(
      python,
      files.flatMap((f) => ['-r', join(PYTHON_DIR, f)]),
      listener,
    );
    writeFileSync(stampFile, stamp);
    return python;
  });
}

export type PythonExtra = 'test' | 'learn';
const extraFiles: Record<PythonExtra, string> = {
  test: 'requirements-test.txt',
  learn: 'requirements-learn.txt',
};

/**
 * alight's Python environment made and filled when needed: torch from PyPI with the worker's packages
 * (python/requirements.txt), and `extras`. About 3 GB of downloads the first time (PyPI's torch for Linux carries
 * CUDA libraries; it runs on CPU as well); then a stamp check.
 */
export async function ensurePythonEnv(listener: SetupListener, extras: PythonExtra[] = []): Promise<string> {
  const python = await ensureRequirements(envDir(), 'base', ['requirements.txt'], listener);
  for (const extra of extras) await ensureRequirements(envDir(), extra, [extraFiles[extra]], listener);
  return python;
}

const wanted = ['torch', 'transformers', 'tokenizers', 'safetensors', 'numpy', 'vllm'];

export interface EnvReport {
  venv: string;
  python: string | null;
  packages: Package[];
  fixes: string[];
}

/** What alight's Python environment holds and the command that fills each gap. Starts nothing, installs nothing. */
export function inspectEnv(): EnvReport {
  const venv = envDir();
  const python = existsSync(envPython(venv)) ? envPython(venv) : null;
  const packages = versions(python, wanted);
  const fixes: string[] = [];
  if (packages.some((p) => p.version === null && p.name !== 'vllm'))
    fixes.push(`alight doctor --setup (makes ${venv}: torch and the worker's packages from PyPI, ~3 GB)`);
  if (packages.find((p) => p.name === 'vllm')?.version === null)
    fixes.push('alight doctor --setup --vllm (vLLM for CPU into the same environment, ~1 GB more)');
  return { venv, python, packages, fixes };
}
