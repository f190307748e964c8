import type { K8sConfig } from '../../config/schema.js';
import type { SetupListener } from '../../setup/events.js';
import type { Runtime } from './container.js';
import type { TestsReport } from './grading.js';
import type { GuardResult } from './guards.js';
import type { ParserName } from './log-parsers.js';
import type { readResults } from './pytest-results.js';
import type { Sandbox } from './sandbox.js';
import type { TestSources } from './xfail-sources.js';

// The shapes grading one instance passes around (grader.ts, image-site.ts, pod-site.ts, the SWE-bench runs) and the
// ways of grading (a Grader of src/eval/graders/), apart from the code, so that no module of grading needs another's code for its types.

/** What grading needs of an instance (SWE-bench's columns, plus how to run its tests). */
export interface GradeTask {
  instance_id: string;
  repo: string;
  base_commit: string;
  test_patch: string;
  FAIL_TO_PASS: string[];
  PASS_TO_PASS: string[];
  version?: string;
  test_cmd?: string;
  log_parser?: ParserName;
  /** The row's own test script (SWE-bench v5, SkyRL) for its image; else SWE-bench's spec or test_cmd builds one. */
  eval_script?: string;
  /** The instance's image, for grading in it (no --repos). */
  image?: string;
}

/** A prediction as SWE-bench writes them. */
export interface Prediction {
  instance_id: string;
  model_name_or_path: string;
  model_patch: string | null;
}

export type InstanceStatus = 'resolved' | 'unresolved' | 'empty_patch' | 'error';

export interface InstanceReport {
  instance_id: string;
  status: InstanceStatus;
  patch_is_None: boolean;
  patch_exists: boolean;
  patch_successfully_applied: boolean;
  resolved: boolean;
  tests_status: TestsReport | null;
  /** Why the instance is an error, when it is. */
  error: string | null;
  guard: GuardResult['flags'];
  test_seconds: number | null;
}

/**
 * A way of grading, one variant each, as a command chose it from its flags (commands/grading.ts):
 * - `host`: here, in a workspace made from --repos; the tests in bubblewrap unless `sandboxed` is false (--no-sandbox);
 * - `mounted`: such a workspace mounted at /testbed in a fresh container of `image` (alight's, or --image);
 * - `image`: each instance's own image in a fresh container of `runtime` (image-site.ts's engine site);
 * - `pods`: each instance's image in a fresh Kubernetes pod (pod-site.ts), the pods opened for the command;
 * - `official`: the official swebench package (run/swebench-grader.ts).
 * Made ready to grade (a ReadyGrader: the sandbox set up, the site opened) by withGrader there.
 */
export type MountedGrader = { kind: 'mounted'; reposDir: string; runtime: Runtime; image: string };

/**
 * Where one instance's tests run, ready: `host` with its bubblewrap settings (null: as the user, unsandboxed, an
 * explicit opt-out); `mounted` as chosen; `image` (an engine's or the pods'): how to open a task's image, where the
 * judged tree is put as /testbed (SWE-bench's layout) and the eval script run (image-site.ts).
 */
export type TestSite =
  | { kind: 'host'; reposDir: string; sandbox: HostSandbox | null }
  | MountedGrader
  | { kind: 'image'; open: OpenSite };

/** The local grader's bubblewrap settings (sandbox.ts), less the workspace each grade makes. */
export type HostSandbox = Omit<Sandbox, 'workspace'>;

/** A grader ready for a run's predictions: alight's own, testing them at a TestSite, or the official package. */
export type ReadyGrader = TestSite | { kind: 'official' };

export interface GradeOptions {
  site: TestSite;
  timeoutMs: number;
  allowTestEdits: boolean;
  logFile: string;
  /** SWE-bench's exact behaviour: non-test code that reaches into the test framework is graded, not refused. */
  allowFrameworkAccess?: boolean;
  /** Test output kept at most (its tail); more is an error. */
  maxOutputBytes?: number;
  /** Run the tests for an empty prediction too (the base's own results: alight data validate), not `empty_patch`. */
  testEmpty?: boolean;
}

/** The test log, the judge's flags, and the plugin's results record (pytest-results.ts) as read. */
export type Tested = {
  log: string;
  flags?: GuardResult['flags'];
  results?: ReturnType<typeof readResults>;
  /** The test files as the grader applied them, read before the run (xfail-sources.ts: which tests may xfail). */
  xfails?: TestSources;
};
export type Ran = Tested | { error: string };

/** One grade's tests in the instance's image, `ws` (the judged workspace) as /testbed. */
export interface SiteRun {
  /** Where the grade keeps its files (eval.sh is in it). */
  dir: string;
  ws: string;
  /** The workspace's paths that differ from the image's /testbed, and of those, the ones that still exist. */
  changed: string[];
  written: string[];
  /** The shell script that runs eval.sh with alight's pytest plugin loaded from /alight/results. */
  script: string;
  /** The results folder: alight's pytest plugin and its key in it before, its signed record after. */
  results: string;
  timeoutMs: number;
  maxOutputBytes: number;
}

/** Where an instance's image runs its grade: a container engine here, or a pod on Kubernetes (pod-site.ts). */
export interface ImageSite {
  /** Copies the image's /testbed to `dest`. */
  copyTestbed(dest: string): Promise<void>;
  /** The tests' log, as runScript writes it. */
  runTests(run: SiteRun): Promise<string>;
  close(): Promise<void>;
}

export type OpenSite = (task: GradeTask) => Promise<ImageSite>;

/** What the grading flags say, as every grader reads it. */
export interface GraderOptions {
  /** --repos: the workspaces are made here from these clones (local, or mounted into podman/docker's image). */
  reposDir?: string;
  /** --image: the one image --repos workspaces are mounted into. */
  image?: string;
  /** false: --no-sandbox, the local grader runs the tests as the user. */
  sandboxed: boolean;
}

/** Where and how long grading runs, and where it reports what it does meanwhile. */
export interface GradingAt {
  k8s: K8sConfig;
  /** One instance's tests' timeout (seconds). */
  timeoutS: number;
  /** A line for the user (a grader image built, a pod problem). */
  notice: (line: string) => void;
  setup: SetupListener;
}

export interface Grader {
  /**
   * Refuses options that do not apply to this grader, and makes what needs no session (an image it mounts into),
   * before anything else runs; `notice` says what it does meanwhile.
   */
  check(o: GraderOptions, notice: (line: string) => void): void;
  /** The grader made ready for `work`; what it opened is closed after, however `work` ends. */
  open<T>(o: GraderOptions, at: GradingAt, work: (grader: ReadyGrader) => Promise<T>): Promise<T>;
}
