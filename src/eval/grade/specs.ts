import { markers } from './grading.js';
import { fileSections } from './guards.js';

/**
 * How SWE-bench tests its own repositories (the per-repo, per-version specs of the official harness,
 * `swebench/harness/constants/python.py` as of v4.1.0, which v5 moved into each row's `eval_script`): the test
 * command, the environment commands run before it, and the install re-run after the prediction is applied. Only the
 * 12 repositories of SWE-bench Verified; other repositories bring their own `test_cmd` / `install_config` /
 * `eval_script`. Cross-checked against the official table in python/tests/test_eval_specs.py.
 */
interface RepoSpec {
  test_cmd: string;
  install: string;
  eval_commands?: string[];
}

const pytestRA = 'pytest -rA';
const django = './tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1';
const utf8 = [
  'export LANG=en_US.UTF-8',
  'export LC_ALL=en_US.UTF-8',
  'export PYTHONIOENCODING=utf8',
  'export LANGUAGE=en_US:en',
];
const editable = 'python -m pip install -e .';

/** repo → [versions (null: every other version), spec] in order; the first that names the version wins. */
const specs: Record<string, [string[] | null, RepoSpec][]> = {
  'astropy/astropy': [
    [
      ['0.1', '0.2', '0.3', '0.4', '1.1', '1.2', '1.3'],
      {
        test_cmd: 'pytest -rA -vv -o console_output_style=classic --tb=no',
        install: 'python -m pip install -e .[test] --verbose',
      },
    ],
    [null, { test_cmd: pytestRA, install: 'python -m pip install -e .[test] --verbose' }],
  ],
  'django/django': [
    [
      ['1.9'],
      { test_cmd: './tests/runtests.py --verbosity 2', install: 'python setup.py install', eval_commands: utf8 },
    ],
    [
      ['1.7', '1.8', '1.10', '1.11', '2.0', '2.1', '2.2'],
      { test_cmd: django, install: 'python setup.py install', eval_commands: utf8 },
    ],
    [['1.4', '1.5', '1.6'], { test_cmd: django, install: 'python setup.py install' }],
    [
      ['3.0', '3.1', '3.2'],
      {
        test_cmd: django,
        install: editable,
        eval_commands: [
          "sed -i '/en_US.UTF-8/s/^# //g' /etc/locale.gen && locale-gen",
          'export LANG=en_US.UTF-8',
          'export LANGUAGE=en_US:en',
          'export LC_ALL=en_US.UTF-8',
        ],
      },
    ],
    [null, { test_cmd: django, install: editable }],
  ],
  'matplotlib/matplotlib': [
    [['3.8', '3.9'], { test_cmd: pytestRA, install: 'python -m pip install --no-build-isolation -e ".[dev]"' }],
    [
      ['2.0', '2.1', '2.2', '1.0', '1.1', '1.2', '1.3', '1.4', '1.5'],
      { test_cmd: pytestRA, install: 'python setup.py build; python setup.py install' },
    ],
    [null, { test_cmd: pytestRA, install: editable }],
  ],
  'mwaskom/seaborn': [
    [['0.11'], { test_cmd: 'pytest --no-header -rA', install: editable }],
    [null, { test_cmd: 'pytest --no-header -rA', install: 'python -m pip install -e .[dev]' }],
  ],
  'pallets/flask': [[null, { test_cmd: pytestRA, install: editable }]],
  'psf/requests': [[null, { test_cmd: pytestRA, install: 'python -m pip install .' }]],
  'pydata/xarray': [[null, { test_cmd: pytestRA, install: editable }]],
  'pylint-dev/pylint': [[null, { test_cmd: pytestRA, install: editable }]],
  'pytest-dev/pytest': [[null, { test_cmd: pytestRA, install: editable }]],
  'scikit-learn/scikit-learn': [
    [null, { test_cmd: pytestRA, install: 'python -m pip install -v --no-use-pep517 --no-build-isolation -e .' }],
  ],
  'sphinx-doc/sphinx': [
    [null, { test_cmd: 'tox --current-env -epy39 -v --', install: 'python -m pip install -e .[test]' }],
  ],
  'sympy/sympy': [
    [
      null,
      {
        test_cmd: "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose",
        install: editable,
      },
    ],
  ],
};

export function repoSpec(repo: string, version: string | undefined): RepoSpec | undefined {
  return specs[repo]?.find(
    ([versions]) => versions === null || (version !== undefined && versions.includes(version)),
  )?.[1];
}

const nonTestExts = ['.json', '.png', 'csv', '.txt', '.md', '.jpg', '.jpeg', '.pkl', '.yml', '.yaml', '.toml'];

/** The official test directives: the test patch's files less data files; Django's as dotted test modules. */
export function testDirectives(repo: string, testPatch: string): string[] {
  const files = fileSections(testPatch)
    .map((s) => s.file)
    .filter((f) => !nonTestExts.some((ext) => f.endsWith(ext)));
  if (repo !== 'django/django') return files;
  return files.map((f) =>
    f
      .replace(/\.py$/, '')
      .replace(/^tests\//, '')
      .replaceAll('/', '.'),
  );
}

export interface EvalScriptTask {
  repo: string;
  version?: string;
  base_commit: string;
  test_patch: string;
  test_cmd?: string;
  eval_script?: string;
}

export const shellQuote = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;

/**
 * The script that runs an instance's tests in its image (/testbed), after the prediction is applied: the row's own
 * `eval_script` (SWE-bench v5, SkyRL), else the official v4 script from the repo's spec, else one from the row's test
 * command. Each records the test command's exit status in `$ALIGHT_TEST_EXIT` and exits with it, so the status the
 * grader logs is the process's, never a line the code under test printed.
 */
export function evalScript(task: EvalScriptTask): string {
  return withExitStatus(evalScriptLines(task));
}

/** The eval script's commands as the official harness takes them (no shebang, no `set` line, no exit-status record). */
export function evalScriptLines(task: EvalScriptTask): string[] {
  if (task.eval_script)
    return task.eval_script.split('\n').filter((l) => l !== '#!/bin/bash' && l !== 'set -uxo pipefail');
  const spec = repoSpec(task.repo, task.version);
  const testFiles = [...new Set(fileSections(task.test_patch).flatMap((s) => s.paths))];
  // Each file the test patch touches as the base has it; one it adds, absent (`git checkout` alone fails on those).
  const base = shellQuote(task.base_commit);
  const reset = testFiles
    .map((f) => `{ git checkout ${base} -- ${shellQuote(f)} 2>/dev/null || rm -f ${shellQuote(f)}; }`)
    .join('; ');
  const conda = [
    'if [ -f /opt/miniconda3/bin/activate ]; then source /opt/miniconda3/bin/activate; conda activate testbed; fi',
  ];
  const testCmd = task.test_cmd ?? spec?.test_cmd ?? 'python3 -m pytest -rA --tb=no -p no:cacheprovider';
  return [
    ...conda,
    'cd /testbed',
    ...(spec?.eval_commands ?? []),
    'git config --global --add safe.directory /testbed',
    'cd /testbed',
    `git -c core.fileMode=false diff ${base}`,
    ...(spec ? [spec.install] : []),
    reset,
    `git apply -v - <<'EOF_114329324912'\n${task.test_patch}\nEOF_114329324912`,
    `: '${markers.start}'`,
    [testCmd, ...testDirectives(task.repo, task.test_patch).map(shellQuote)].join(' '),
    `: '${markers.end}'`,
    reset,
  ];
}

function withExitStatus(lines: string[]): string {
  const end = lines.findIndex((l) => l.includes(markers.end));
  const body = end < 0 ? lines : [...lines.slice(0, end), 'ALIGHT_TEST_EXIT=$?', ...lines.slice(end)];
  return ['#!/bin/bash', 'set -uxo pipefail', ...body, `exit \${ALIGHT_TEST_EXIT:-1}`, ''].join('\n');
}
