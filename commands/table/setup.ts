import { type Command, Option } from 'commander';
import type { DoctorFlags } from '../doctor.js';
import { onlyWith } from '../flags.js';
import type { init } from '../init.js';
import { configFileOption, jsonOption, k8sTargetFlags } from '../options.js';
import { define } from './define.js';

export function registerInit(program: Command): void {
  define(program, {
    name: 'init',
    description:
      'scaffold a project: alight.config.yaml, an example harness ' +
      'and tasks (or, --template swe, a SWE agent trained on 8 GPUs)',
    args: [['[dir]', 'target folder', '.']],
    options: [
      new Option('--template <name>', 'basic: record an example harness; swe: RL a SWE agent with the verl backend')
        .choices(['basic', 'swe'])
        .default('basic'),
      new Option('--force', 'overwrite existing files'),
    ],
    examples: ['alight init', 'alight init my-agent', 'alight init --template swe swe-rl'],
    action: async (dir: string, opts: Parameters<typeof init>[1]) => (await import('../init.js')).init(dir, opts),
  });
}

/**
 * `alight doctor`: a backend's Python side, or (`--upstream`) a vLLM the user runs, or (`--runner k8s`) the Kubernetes
 * runner's cluster; one at a time.
 */
export function registerDoctor(program: Command): void {
  define(program, {
    name: 'doctor',
    description: 'check the Python side of a backend (or a vLLM you run) and say how to fix what is missing',
    options: [
      new Option('--backend <backend>', 'torch: the PyTorch worker; verl: CUDA, verl, vLLM, Ray')
        .choices(['torch', 'verl'])
        .default('torch')
        .conflicts('upstream'),
      new Option('--setup', "make the backend's virtualenv and install its requirements into it").conflicts('upstream'),
      onlyWith(
        new Option('--vllm', "with --setup: vLLM's CPU build too (into the same environment)"),
        'setup',
        '--vllm goes with --setup (alight doctor lists vLLM without it)',
      ),
      new Option('--upstream <url>', 'check a vLLM you run: token ids, the logprobs mode training needs'),
      onlyWith(new Option('--upstream-key-env <var>', 'the variable holding its API key'), 'upstream'),
      new Option(
        '--runner <kind>',
        "k8s: check the Kubernetes runner's cluster: context, namespace, permissions, a pod reaching the gateway",
      )
        .choices(['k8s'])
        .conflicts(['upstream', 'setup']),
      ...Object.values(k8sTargetFlags()).map((o) => onlyWith(o, 'runner')),
      onlyWith(configFileOption(), 'runner'),
      jsonOption(),
    ],
    examples: [
      'alight doctor',
      'alight doctor --setup --vllm',
      'alight doctor --backend verl --setup',
      'alight doctor --upstream http://127.0.0.1:8000/v1',
      'alight doctor --runner k8s --image ghcr.io/me/agent:1 --namespace rl',
    ],
    action: async (opts: DoctorFlags) => (await import('../doctor.js')).doctor(opts),
  });
}
