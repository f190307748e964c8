import { getLlama, LlamaLogLevel, type Token } from 'node-llama-cpp';
import { resolveModel } from '../serve/models.js';
import type { Detokenize } from './diagnose.js';

/** The tokenizer of a GGUF model (a path or a known model's name), loaded vocabulary-only: no weights. */
export async function ggufDetokenizer(nameOrPath: string): Promise<Detokenize> {
  const path = await resolveModel(nameOrPath, (line) => process.stderr.write(`alight: ${line}\n`));
  const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath: path, vocabOnly: true });
  return (ids) => model.detokenize(ids as Token[], true);
}
