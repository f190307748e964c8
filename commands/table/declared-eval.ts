import { Option } from 'commander';
import { type Runtime, runtimeNames, swebenchImageTemplate } from '../../src/eval/grade/container.js';
import { type GraderName, graderNames } from '../../src/eval/graders/index.js';
import { allOnlyWith, alwaysSet, type FlagsOf, flag } from '../flags.js';
import {
  aliased,
  concurrencyOption,
  configOption,
  engineFlags,
  jsonOption,
  judgeFlags,
  k8sTargetFlags,
  num,
  rolloutsOption,
  runOption,
  storeFlags,
} from '../options.js';

// The flags of the commands that grade (eval's, and data's validate and probe), apart from their rows, as declared.ts
// explains: commands/eval.ts, data-measure.ts and grading.ts read their types.

/** How the grader treats what a prediction changed: the same three flags wherever alight grades. */
export const gradingFlags = () => ({
  allowTestEdits: flag<boolean>(
    new Option(
      '--allow-test-edits',
      'grade edits to tests and test configuration instead of removing them (still flagged)',
    ),
  ),
  allowTestFrameworkAccess: flag<boolean>(
    new Option(
      '--allow-test-framework-access',
      "grade non-test code that imports or drives pytest (SWE-bench's " +
        'exact behaviour) instead of counting it unresolved (still flagged)',
    ),
  ),
  sandbox: alwaysSet<boolean>(
    new Option(
      '--no-sandbox',
      'run the tests of the local grader as you, outside bubblewrap (the ' +
        'code under test can then reach your files, network and later grades)',
    ),
  ),
});

/** Which grader, and in which image: `eval swebench`, `eval grade` and (without --image) `data validate`. */
export const graderFlags = () => ({
  grader: flag<GraderName>(
    new Option(
      '--grader <grader>',
      'local: here, in --repos workspaces; podman|docker: a fresh container per grade, network off ' +
        "(each instance's image, or --image with --repos mounted); k8s: a fresh pod of each instance's image " +
        '(deny-all NetworkPolicy); swebench: the official package (needs Docker). Default: local with --repos, ' +
        'else --runtime',
    ).choices([...graderNames]),
  ),
  image: flag<string>(
    new Option(
      '--image <name>',
      'with --repos and --grader podman|docker: the one image to grade ' +
        "in (default: alight's Debian + pytest image, built on first use)",
    ),
  ),
  imageTemplate: alwaysSet<string>(
    new Option(
      '--image-template <t>',
      'instance images for rows without image/image_name/docker_image ({id}, {id_1776}, {repo})',
    ).default(swebenchImageTemplate),
  ),
});

/** `--repos`: the local clones or bundles a command's workspaces are made from. */
export const reposOption = (description: string) => flag<string>(new Option('--repos <dir>', description));

/** `--runtime`: agents in a container of each instance's image. */
export const runtimeOption = () =>
  flag<Runtime | 'k8s'>(
    new Option(
      '--runtime <engine>',
      "or agents work in a container of each instance's image (/testbed): podman|docker here (the harness runs " +
        'here and is told ALIGHT_CONTAINER, ALIGHT_CONTAINER_RUNTIME, ALIGHT_WORKDIR), or k8s: a Job per attempt ' +
        'with the harness inside it',
    ).choices([...runtimeNames, 'k8s']),
  );

/** eval's Kubernetes flags (its image is each instance's: no --image). */
export function evalK8sFlags() {
  const { image: _image, ...target } = k8sTargetFlags();
  return allOnlyWith({ ...target, retryInfra: configOption('--retry-infra <n>', 'k8s.retryInfra') }, 'runtime');
}

/** `eval grade --grader k8s`: the cluster's settings (the config's k8s section) and the two most often changed. */
export const gradeK8sFlags = () =>
  allOnlyWith(
    {
      config: flag<string>(
        new Option('--config <file>', 'with --grader k8s: the config whose k8s section the grading pods use'),
      ),
      namespace: configOption('--namespace <ns>', 'k8s.namespace'),
      kubeContext: configOption('--kube-context <name>', 'k8s.context'),
    },
    'grader',
  );

/** `--timeout`: the longest a harness, or a test run, may take. */
export const timeoutOption = (description: string) =>
  alwaysSet<number>(new Option('--timeout <seconds>', description).argParser(num).default(1800));

/**
 * What runs a harness over instances and grades its attempts: `eval swebench`, and `data probe` (which measures the
 * kept tasks: `k` attempts by default). `-n`, `--concurrency` and `--run` as record and train spell them; `-k`,
 * `--workers`, `--run-id` too.
 */
export function attemptFlags(k: number, runName: string) {
  const rollouts = rolloutsOption(undefined, 'attempts per instance (pass@k)').default(k);
  const concurrency = concurrencyOption(undefined, 'harnesses (and grades) at once').default(2);
  return {
    instances: flag<string>(new Option('--instances <ids>', 'comma-separated instance ids to run (default: all)')),
    n: aliased(alwaysSet<number>(rollouts), '-k <k>'),
    concurrency: aliased(alwaysSet<number>(concurrency), '--workers <n>'),
    ...engineFlags(),
    repos: reposOption(
      'agents work in fresh workspaces made from local clones (owner__name/) or bundles (owner__name.bundle)',
    ),
    runtime: runtimeOption(),
    ...evalK8sFlags(),
    timeout: timeoutOption('kill a harness after this long'),
    gradeTimeout: alwaysSet<number>(
      new Option('--grade-timeout <seconds>', 'longest test run when grading').argParser(num).default(1800),
    ),
    run: aliased(runOption(`run name (default: ${runName}-<time>; the same name resumes it)`), '--run-id <id>'),
    out: flag<string>(new Option('--out <dir>', 'where predictions, reports and summary go (default: the run folder)')),
    ...gradingFlags(),
    ...graderFlags(),
    ...storeFlags(),
  };
}

/** `alight eval swebench`'s flags. */
export const swebenchFlags = () => ({
  tasks: flag<string>(new Option('--tasks <file>', "instances in SWE-bench's columns (JSONL, JSON, Parquet)")),
  fromDb: flag<boolean>(new Option('--from-db', 'the tasks alight data kept')),
  ...attemptFlags(1, 'eval'),
  json: jsonOption('print the run summary (schema_version 2) as JSON'),
});
export type SwebenchFlags = FlagsOf<ReturnType<typeof swebenchFlags>>;

/** `alight eval compare`'s flags. */
export const compareFlags = () => ({ ...storeFlags('locates the run folders'), json: jsonOption() });
export type CompareFlags = FlagsOf<ReturnType<typeof compareFlags>>;

/** `alight eval reward`'s flags. */
export const rewardFlags = () => ({
  repos: alwaysSet<string>(reposOption('local clones or bundles, to grade in a fresh workspace').makeOptionMandatory()),
  workspace: flag<string>(new Option('--workspace <dir>', "the agent's workspace (default: the current folder)")),
  timeout: timeoutOption('longest test run'),
  ...gradingFlags(),
});
export type RewardFlags = FlagsOf<ReturnType<typeof rewardFlags>>;

/** `alight eval grade`'s flags: it opens no store, and reads the config only for the Kubernetes grader. */
export function gradeFlags() {
  const concurrency = concurrencyOption(undefined, 'instances graded at once').default(1);
  return {
    predictions: alwaysSet<string>(
      new Option(
        '--predictions <file>',
        'predictions (JSONL, JSON list or dict): instance_id, model_name_or_path, model_patch',
      ).makeOptionMandatory(),
    ),
    tasks: alwaysSet<string>(
      new Option(
        '--tasks <file>',
        "the instances, in SWE-bench's columns (test_cmd or install_config.test_cmd for the test command)",
      ).makeOptionMandatory(),
    ),
    repos: reposOption(
      'local clones (owner__name/) or bundles (owner__name.bundle) to grade in (else the instance images)',
    ),
    out: flag<string>(
      new Option('--out <dir>', 'where report.json files and summary.json go (default: .alight/eval/grade-<time>)'),
    ),
    concurrency: aliased(alwaysSet<number>(concurrency), '--workers <n>'),
    timeout: timeoutOption('longest test run per instance'),
    ...gradingFlags(),
    ...graderFlags(),
    ...gradeK8sFlags(),
    json: jsonOption('print the run summary (schema_version 2) as JSON'),
  };
}
export type GradeFlags = FlagsOf<ReturnType<typeof gradeFlags>>;

/** `alight eval judge`'s flags. */
export const evalJudgeFlags = () => ({
  ...judgeFlags(),
  ...storeFlags(),
  json: jsonOption('print the summary as JSON'),
});
export type EvalJudgeFlags = FlagsOf<ReturnType<typeof evalJudgeFlags>>;
