import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { AlightError, ExitCode } from '../errors.js';
import { fileMagic } from '../magic.js';
import { run } from '../process/launch.js';
import { knownModels, packagesOf, resolveModel, sha256 } from '../serve/models.js';
import type { SetupListener } from '../setup/events.js';
import { ensurePythonEnv, PYTHON_DIR } from '../setup/python-env.js';
import { type CheckedPrompt, greedyContinuations } from './reference.js';

/** Tokens of llama.cpp's greedy continuation per checked prompt: enough to leave the prompt's easy first tokens. */
export const CHECKED_TOKENS = 32;

export interface ConvertOptions {
  /** A .gguf path or a known model's name. */
  model: string;
  out: string;
  log: (line: string) => void;
  setup: SetupListener;
  signal?: AbortSignal;
}

/** What `python -m alight_worker.convert_gguf convert` reports. */
interface Converted {
  architecture: string;
  licence: string | null;
  parameters: number;
  chat_template: boolean;
  eos_token_ids: number[];
  eos_tokens: string[];
  prompts: CheckedPrompt[];
}

/** How closely the folder follows llama.cpp: the share of llama.cpp's greedy tokens that are its argmax too. */
export interface Agreement {
  agreement: number | null;
  same_prompt_ids: boolean;
  prompts: { same_prompt_ids: boolean; matches: number; positions: number }[];
}

/** The conversion's record, written to the folder as alight-conversion.json. */
export interface Conversion extends Omit<Converted, 'prompts'> {
  source: { model: string; file: string; sha256: string; packages: string[] | null; description: string | null };
  /** A known model's; else guessed: a model with a chat template is taken to be instruction-tuned. */
  kind: 'instruct' | 'base';
  agreement: Agreement & { tokens_per_prompt: number; reference: string };
  seconds: { convert: number; reference: number; agree: number };
}

export const RECORD_FILE = 'alight-conversion.json';

/** Converts a GGUF model into a Hugging Face folder at `out` and measures it against llama.cpp; see docs/engines.md. */
export async function convertModel(o: ConvertOptions): Promise<Conversion> {
  const out = resolve(o.out);
  const existed = checkOut(out);
  const gguf = await resolveModel(o.model, o.log);
  checkGguf(gguf);
  const python = await ensurePythonEnv(o.setup);
  const work = mkdtempSync(join(tmpdir(), 'alight-convert-'));
  try {
    const clock = stopwatch();
    const converted = await convertStep<Converted>(python, ['convert', '--gguf', resolve(gguf), '--out', out], o);
    const convertS = clock();
    o.log(`llama.cpp: greedy continuations of ${converted.prompts.length} prompts`);
    const reference = await greedyContinuations(gguf, converted.prompts, CHECKED_TOKENS);
    const referenceS = clock();
    const file = join(work, 'reference.json');
    await writeFile(file, JSON.stringify(reference));
    const agreement = await convertStep<Agreement>(python, ['agree', '--out', out, '--reference', file], o);
    const seconds = { convert: convertS, reference: referenceS, agree: clock() };
    const record = await recordOf(o.model, gguf, converted, agreement, seconds);
    await writeFile(join(out, RECORD_FILE), `${JSON.stringify(record, null, 2)}\n`);
    return record;
  } catch (err) {
    // The folder was new or empty: leave it so, for the next try.
    rmSync(out, { recursive: true, force: true });
    if (existed) mkdirSync(out);
    throw err;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function recordOf(
  model: string,
  gguf: string,
  { prompts, ...converted }: Converted,
  agreement: Agreement,
  seconds: Conversion['seconds'],
): Promise<Conversion> {
  const known = Object.hasOwn(knownModels, model) ? knownModels[model] : undefined;
  return {
    source: {
      model,
      file: resolve(gguf),
      sha256: await sha256(gguf),
      packages: known ? packagesOf(known) : null,
      description: known?.source ?? null,
    },
    kind: known?.kind ?? (converted.chat_template ? 'instruct' : 'base'),
    ...converted,
    licence: known?.licence ?? converted.licence,
    agreement: { ...agreement, tokens_per_prompt: CHECKED_TOKENS, reference: 'llama.cpp (node-llama-cpp), greedy' },
    seconds,
  };
}

/** The output folder must be new or empty (a conversion never mixes its files with others'); whether it exists. */
export function checkOut(out: string): boolean {
  if (!existsSync(out)) return false;
  if (!statSync(out).isDirectory()) throw new AlightError(`--out ${out} is a file: pass a folder`, ExitCode.input);
  if (readdirSync(out).length > 0)
    throw new AlightError(`--out ${out} is not empty: pass a new or empty folder`, ExitCode.input);
  return true;
}

/** A GGUF file starts with the bytes `GGUF`. */
function checkGguf(path: string): void {
  if (!statSync(path).isFile()) throw new AlightError(`${path} is not a file: pass a .gguf file`, ExitCode.input);
  if (fileMagic(path) !== 'GGUF') throw new AlightError(`${path} is not a GGUF file`, ExitCode.input);
}

/** One step (`convert`, `agree`) of python/alight_worker/convert_gguf.py. */
const convertStep = <T>(python: string, args: string[], o: ConvertOptions): Promise<T> =>
  pythonStep<T>(python, 'alight_worker.convert_gguf', args, o, 'the conversion');

/**
 * `python -m <module> <args>` in alight's environment: its `progress: ` lines to `log`, its last stdout line (JSON)
 * returned; a failure says `what` failed and the module's last words.
 */
export async function pythonStep<T>(
  python: string,
  module: string,
  args: string[],
  o: { log: (line: string) => void; signal?: AbortSignal },
  what: string,
): Promise<T> {
  const said: string[] = [];
  const r = await run({
    command: python,
    args: ['-m', module, ...args],
    cwd: PYTHON_DIR,
    env: { ...process.env, PYTHONPATH: PYTHON_DIR },
    stdout: { tail: 1 << 20 },
    stderr: {
      lines: (line) => (line.startsWith('progress: ') ? o.log(line.slice(10)) : said.push(line) > 20 && said.shift()),
    },
    group: true,
    signal: o.signal,
  });
  if (r.exitCode !== 0) {
    const why = said.filter((l) => l.trim()).slice(-1)[0] ?? r.reason ?? `exit code ${r.exitCode}`;
    throw new AlightError(`${what} failed (${args[0]}): ${why}`, ExitCode.failure);
  }
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as T;
}

/** Seconds since the last call (or since it was made). */
function stopwatch(): () => number {
  let last = performance.now();
  return () => {
    const now = performance.now();
    const s = (now - last) / 1000;
    last = now;
    return Math.round(s * 10) / 10;
  };
}
