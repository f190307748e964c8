import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AlightError } from '../../src/errors.js';
import { packageRoot } from '../../src/package-root.js';
import { probe } from '../../src/process/launch.js';
import type { SetupListener } from '../../src/setup/events.js';
import { ensurePythonEnv, pip } from '../../src/setup/python-env.js';
import { commandNeed, ensureSystemPackages } from '../../src/setup/system.js';
import { ensureVerlEnv } from '../../src/setup/verl-env.js';
import { ensureVllm } from '../../src/setup/vllm-env.js';
import { ensureTrackersEnv } from '../../src/train/trackers.js';
import { setupProgress } from '../../src/ui/setup-progress.js';
import { ensureHarnesses } from '../helpers/harnesses.js';
import { prepareCluster } from '../helpers/k8s-cluster.js';
import { swebenchPython } from '../helpers/swebench-python.js';
import { keepSqliteBuild } from './sqlite-build.js';
import { makeRunTempRoot } from './temp-root.js';

/**
 * vitest's global set-up: everything the suite needs, installed before any test runs, so a fresh machine needs only
 * `npm ci && npm test` (cached under ~/.cache/alight; a second run only checks). On a machine where alight cannot
 * install system packages (not root, no password-less sudo) it stops with the one command to run.
 */
export default async function prepare(): Promise<() => void> {
  const removeTempRoot = makeRunTempRoot();
  try {
    await install();
    return removeTempRoot;
  } catch (err) {
    if (!(err instanceof AlightError)) throw err;
    // What the user must do, without vitest's stack around it.
    process.stderr.write(`alight: ${err.message}\n`);
    removeTempRoot();
    process.exit(err.exitCode);
  }
}

async function install(): Promise<void> {
  const listener = setupProgress();
  const started = Date.now();
  // The container graders and runtimes build their image from a debootstrap rootfs and run it with podman and runc.
  // bubblewrap: the local grader's sandbox.
  await ensureSystemPackages(
    [
      commandNeed('podman', 'podman'),
      commandNeed('runc', 'runc'),
      commandNeed('debootstrap', 'debootstrap'),
      commandNeed('bwrap', 'bubblewrap'),
      // Debian's Chromium, which playwright-core drives for the `alight ui` tests (no browser download needed).
      commandNeed('chromium', 'chromium'),
      // The Gemini CLI test: its own network namespace, and every connection the CLI attempts on record.
      commandNeed('strace', 'strace'),
      commandNeed('ip', 'iproute2'),
    ],
    'the container, grader and browser tests',
    listener,
  );
  await ensureRuff(await ensurePythonEnv(listener, ['test', 'learn']), listener);
  await ensureVllm('cpu', listener);
  // TensorBoard, W&B and MLflow for `train --report-to` and the readers its test checks them with.
  await ensureTrackersEnv(listener);
  // The verl backend's own stack (CUDA wheels, ~5 GB): its CPU-side tests build verl's trainer and Ray for real.
  await ensureVerlEnv(listener);
  swebenchPython();
  // Claude Code, Codex and Gemini CLI, for the Anthropic Messages, Responses and Gemini API tests.
  await ensureHarnesses(listener);
  // A real single-node Kubernetes for the Kubernetes runner's tests (built once, ~20 min; started by those tests).
  await prepareCluster(listener);
  keepSqliteBuild();
  listener({ type: 'step', message: `test set-up ready (${Math.round((Date.now() - started) / 1000)} s)` });
}

/**
 * ruff, the Python formatter and linter (test/e2e/python.test.ts, `npm run lint:py`), into the test virtualenv at the
 * version ruff.toml requires: a tool for the tests only, not in python/requirements*.txt that users install.
 */
async function ensureRuff(python: string, listener: SetupListener): Promise<void> {
  const version = /^required-version = "==(.+)"$/m.exec(readFileSync(join(packageRoot, 'ruff.toml'), 'utf8'))![1];
  if (probe(python, ['-m', 'ruff', '--version']).stdout.trim() === `ruff ${version}`) return;
  listener({ type: 'step', message: `installing ruff ${version} (the Python linter) for the tests` });
  await pip(python, ['--quiet', `ruff==${version}`], listener);
}
