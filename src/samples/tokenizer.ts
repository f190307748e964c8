import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { getLlama, LlamaLogLevel, type Token } from 'node-llama-cpp';
import { AlightError, ExitCode } from '../errors.js';
import { resolveModel } from '../serve/models.js';
import type { Detokenize } from './diagnose.js';

/**
 * A detokenizer from a Hugging Face `tokenizer.json` (a file, or a model folder holding one, with its
 * `tokenizer_config.json` when present) or from a GGUF model (a path or a known model's name, loaded vocabulary-only).
 */
export async function loadDetokenizer(spec: string): Promise<Detokenize> {
  const json = huggingFaceTokenizerFile(spec);
  return json ? huggingFaceDetokenizer(json) : ggufDetokenizer(spec);
}

function huggingFaceTokenizerFile(spec: string): string | null {
  if (spec.endsWith('.json')) return spec;
  if (existsSync(spec) && statSync(spec).isDirectory()) {
    const file = join(spec, 'tokenizer.json');
    if (existsSync(file)) return file;
    throw new AlightError(`${spec} is a folder without tokenizer.json`, ExitCode.input);
  }
  return null;
}

function huggingFaceDetokenizer(file: string): Detokenize {
  const config = join(file, '..', 'tokenizer_config.json');
  let tokenizer: Tokenizer;
  try {
    tokenizer = new Tokenizer(
      JSON.parse(readFileSync(file, 'utf8')),
      existsSync(config) ? JSON.parse(readFileSync(config, 'utf8')) : {},
    );
  } catch (err) {
    throw new AlightError(`cannot load the tokenizer ${file}: ${(err as Error).message}`, ExitCode.input);
  }
  return (ids) => tokenizer.decode([...ids], { skip_special_tokens: false });
}

async function ggufDetokenizer(nameOrPath: string): Promise<Detokenize> {
  const path = await resolveModel(nameOrPath, (line) => process.stderr.write(`alight: ${line}\n`));
  const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath: path, vocabOnly: true });
  return (ids) => model.detokenize(ids as Token[], true);
}
