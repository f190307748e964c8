import type { Command } from 'commander';
import { type RecordFlags, recordFlags } from './declared.js';
import {
  type GatewayFlags,
  gatewayFlags,
  type ServeFlags,
  type ServeVllmFlags,
  serveFlags,
  serveVllmFlags,
} from './declared-serve.js';
import { define } from './define.js';

export function registerRecord(program: Command): void {
  define(program, {
    name: 'record',
    description: 'run a harness through a recording gateway and store every model call',
    args: [
      ['<cmd>', 'harness command'],
      ['[args...]', 'its arguments; {{field}} is replaced by the task field'],
    ],
    passThrough: true,
    options: recordFlags(),
    examples: [
      'alight record --upstream http://127.0.0.1:8000/v1 -- python agent.py',
      'alight record --serve gemma3-270m --tasks tasks.jsonl -n 4 -- node harness.mjs',
      'alight record --tasks tasks.jsonl -n 4 --concurrency 8 --timeout 600 -- node harness.mjs "{{problem}}"',
      'alight record --tasks tasks.jsonl --reward-cmd "python grade.py" -- ./run-agent.sh',
      'alight record --runner k8s --image ghcr.io/me/agent:1 --tasks tasks.jsonl -n 4 -- python agent.py',
    ],
    action: async (cmd: string, args: string[], opts: RecordFlags) =>
      (await import('../record.js')).recordCommand(cmd, args, opts),
  });
}

export function registerServeVllm(program: Command): void {
  define(program, {
    name: 'serve-vllm',
    description:
      'serve a Hugging Face model with vLLM as a managed process: bound to 127.0.0.1, an API key only you hold, ' +
      "the logprobs training needs (installs vLLM's CPU build on first use where there is no GPU)",
    args: [['<model>', 'a Hugging Face model folder or hub id']],
    options: serveVllmFlags(),
    examples: [
      'alight serve-vllm Qwen/Qwen2.5-7B-Instruct --tensor-parallel 2',
      'alight record --serve-vllm Qwen/Qwen2.5-7B-Instruct --tasks tasks.jsonl -n 4 -- python agent.py',
    ],
    action: async (model: string, opts: ServeVllmFlags) =>
      (await import('../serve-vllm.js')).serveVllmCommand(model, opts),
  });
}

export function registerServe(program: Command): void {
  define(program, {
    name: 'serve',
    description: 'serve a GGUF model on llama.cpp (CPU) with vLLM-compatible token ids',
    options: serveFlags(),
    examples: [
      'alight serve --model gemma3-270m --port 8000',
      'alight serve --model ./my-model.gguf --ctx 8192 --parallel 8',
    ],
    action: async (opts: ServeFlags) => (await import('../serve.js')).serveCommand(opts),
  });
}

export function registerGateway(program: Command): void {
  define(program, {
    name: 'gateway',
    description: 'run the recording gateway on its own (for clusters and benchmarks)',
    options: gatewayFlags(),
    examples: ['alight gateway --port 9000 --upstream http://127.0.0.1:8000/v1 --admin-key $KEY'],
    action: async (opts: GatewayFlags) => (await import('../gateway.js')).gatewayCommand(opts),
  });
}
