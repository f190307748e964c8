/**
 * The files that load models (vLLM, torch, verl, llama.cpp) and keep both cores busy: they take turns
 * (one-model-file.ts). The first runs beside the rest of the suite (sequencer.ts): the one whose length is nearest
 * the rest's.
 */
export const modelFiles = [
  'test/e2e/vllm.test.ts',
  'test/e2e/distill.test.ts',
  'test/e2e/train.test.ts',
  'test/e2e/train-lora.test.ts',
  'test/e2e/train-judge.test.ts',
  'test/e2e/judge-real.test.ts',
  'test/e2e/sft.test.ts',
  'test/e2e/verl.test.ts',
  'test/e2e/verl-parity.test.ts',
  'test/e2e/verl-nodes.test.ts',
  'test/e2e/record-serve.test.ts',
  'test/e2e/models-convert.test.ts',
  'test/e2e/train-real-model.test.ts',
  'test/e2e/eval-swebench.test.ts',
  'test/integration/serve.test.ts',
  'test/integration/serve-reload.test.ts',
];
// Not here: test/e2e/k8s-runner.test.ts, a whole cluster (~720 MiB) that mostly waits on its pods: it runs with the
// other files.
