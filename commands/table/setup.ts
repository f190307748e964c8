import type { Command } from 'commander';
import { type DoctorFlags, doctorFlags, type InitFlags, initFlags } from './declared-setup.js';
import { define } from './define.js';

export function registerInit(program: Command): void {
  define(program, {
    name: 'init',
    description:
      'scaffold a project: alight.config.yaml, an example harness ' +
      'and tasks (or, --template swe, a SWE agent trained on 8 GPUs)',
    args: [['[dir]', 'target folder', '.']],
    options: initFlags(),
    examples: ['alight init', 'alight init my-agent', 'alight init --template swe swe-rl'],
    action: async (dir: string, opts: InitFlags) => (await import('../init.js')).init(dir, opts),
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
    options: doctorFlags(),
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
