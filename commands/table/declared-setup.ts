import { Option } from 'commander';
import type { Template } from '../../src/scaffold.js';
import { allOnlyWith, alwaysSet, type FlagsOf, flag, onlyWith } from '../flags.js';
import { configFileOption, jsonOption, k8sTargetFlags } from '../options.js';

// The flags of init and doctor, apart from their rows, as declared.ts explains: commands/init.ts and doctor.ts read
// their types.

/** `alight init`'s flags. */
export const initFlags = () => ({
  template: alwaysSet<Template>(
    new Option('--template <name>', 'basic: record an example harness; swe: RL a SWE agent with the verl backend')
      .choices(['basic', 'swe'])
      .default('basic'),
  ),
  force: flag<boolean>(new Option('--force', 'overwrite existing files')),
});
export type InitFlags = FlagsOf<ReturnType<typeof initFlags>>;

/** What `alight doctor` checks by default, and sets up: a backend's Python side. */
const pythonSideFlags = () => ({
  backend: alwaysSet<'torch' | 'verl'>(
    new Option('--backend <backend>', 'torch: the PyTorch worker; verl: CUDA, verl, vLLM, Ray')
      .choices(['torch', 'verl'])
      .default('torch')
      .conflicts('upstream'),
  ),
  setup: flag<boolean>(
    new Option('--setup', "make the backend's virtualenv and install its requirements into it").conflicts('upstream'),
  ),
  vllm: onlyWith(
    flag<boolean>(new Option('--vllm', "with --setup: vLLM's CPU build too (into the same environment)")),
    'setup',
    '--vllm goes with --setup (alight doctor lists vLLM without it)',
  ),
});

/** `alight doctor`'s flags: one check at a time, so each check's flags conflict with (or need) the others'. */
export const doctorFlags = () => ({
  ...pythonSideFlags(),
  upstream: flag<string>(
    new Option('--upstream <url>', 'check a vLLM you run: token ids, the logprobs mode training needs'),
  ),
  upstreamKeyEnv: onlyWith(
    flag<string>(new Option('--upstream-key-env <var>', 'the variable holding its API key')),
    'upstream',
  ),
  runner: flag<'k8s'>(
    new Option(
      '--runner <kind>',
      "k8s: check the Kubernetes runner's cluster: context, namespace, permissions, a pod reaching the gateway",
    )
      .choices(['k8s'])
      .conflicts(['upstream', 'setup']),
  ),
  ...allOnlyWith({ ...k8sTargetFlags(), config: configFileOption() }, 'runner'),
  json: jsonOption(),
});
export type DoctorFlags = FlagsOf<ReturnType<typeof doctorFlags>>;
