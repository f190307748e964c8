/**
 * Test-log parsers with the semantics of the official SWE-bench harness (`swebench/harness/log_parsers/python.py` in
 * swebench 5.0.2, the release the pytest cross-check runs against), written from its behaviour: each maps a log to test
 * name → status. Which repo uses which is `parserForRepo`.
 */
export const testStatuses = ['PASSED', 'FAILED', 'SKIPPED', 'ERROR', 'XFAIL'] as const;
export type TestStatus = (typeof testStatuses)[number];
export type StatusMap = Map<string, TestStatus>;

const startsWithStatus = (line: string): boolean => testStatuses.some((s) => line.startsWith(s));
/** pytest's `SKIPPED [3] file:line: reason` summary: the `[3]` is a count, not a test. */
const skipSummary = (status: string, name: string): boolean => status === 'SKIPPED' && /^\[\d+\]$/.test(name);
const fields = (line: string): string[] => line.split(/\s+/).filter(Boolean);

/** `STATUS name` lines (pytest -rA); a FAILED line's ` - message` is not part of the name. */
function pytest(
  log: string,
  rename: (name: string) => string = (n) => n,
  prepare: (line: string) => string = (l) => l,
): StatusMap {
  const map: StatusMap = new Map();
  for (const line of log.split('\n')) {
    const raw = prepare(line);
    if (!startsWithStatus(raw)) continue;
    const parts = fields(raw.startsWith('FAILED') ? raw.replaceAll(' - ', ' ') : raw);
    if (parts.length <= 1 || skipSummary(parts[0], parts[1])) continue;
    map.set(rename(parts[1]), parts[0] as TestStatus);
  }
  return map;
}

/**
 * Later pytest: colours stripped; `STATUS name…` (the rest of the line is the name) or `name… STATUS` (pytest -v).
 */
function pytestV2(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const raw of log.split('\n')) {
    const line = raw.replace(/\[(\d+)m/g, '').replace(controlCharacters, '');
    if (startsWithStatus(line)) {
      const parts = fields(line.startsWith('FAILED') ? line.split(' - ')[0] : line);
      if (parts.length >= 2 && !skipSummary(parts[0], parts[1]))
        map.set(parts.slice(1).join(' '), parts[0] as TestStatus);
    } else if (testStatuses.some((s) => line.endsWith(s))) {
      const parts = fields(line);
      if (parts.length >= 2) map.set(parts.slice(0, -1).join(' '), parts[parts.length - 1] as TestStatus);
    }
  }
  return map;
}

/** `test[/abs/path/file]` → `test[/file]`: parameters that are absolute paths differ between machines. */
export function shortenPathOption(name: string): string {
  const m = /^(.*?)\[(.*)\]/.exec(name);
  if (!m) return name;
  let option = m[2];
  if (option.startsWith('/') && !option.startsWith('//') && !option.includes('*'))
    option = `/${option.split('/').pop()}`;
  return `${m[1]}[${option}]`;
}

// eslint-disable-next-line no-control-regex
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const controlCharacters = /[\x01-\x1f]/g;

function django(log: string): StatusMap {
  const map: StatusMap = new Map();
  let previous: string | null = null;
  for (const raw of log.split('\n')) {
    let line = raw.trim();
    if (line.includes('--version is equivalent to version')) map.set('--version is equivalent to version', 'PASSED');
    if (line.includes(' ... ')) previous = line.split(' ... ')[0];
    for (const suffix of [' ... ok', ' ... OK', ' ...  OK']) {
      if (line.endsWith(suffix)) {
        if (line.startsWith('Applying sites.0002_alter_domain_unique...test_no_migrations'))
          line = line.split('...').slice(1).join('...').trim();
        map.set(line.slice(0, line.lastIndexOf(suffix)), 'PASSED');
        break;
      }
    }
    if (line.includes(' ... skipped')) map.set(line.split(' ... skipped')[0], 'SKIPPED');
    if (line.endsWith(' ... FAIL')) map.set(line.split(' ... FAIL')[0], 'FAILED');
    if (line.startsWith('FAIL:')) map.set(line.split(/\s+/)[1].trim(), 'FAILED');
    if (line.endsWith(' ... ERROR')) map.set(line.split(' ... ERROR')[0], 'ERROR');
    if (line.startsWith('ERROR:')) map.set(line.split(/\s+/)[1].trim(), 'ERROR');
    if (line.trimStart().startsWith('ok') && previous !== null) map.set(previous, 'PASSED');
  }
  // Django's logger sometimes cuts a test's line with a multi-line message before its "ok".
  for (const pattern of [
    /^(.*?)\s\.\.\.\sTesting against Django installed in ([\s\S]*?) silenced\)\.\nok$/gm,
    /^(.*?)\s\.\.\.\sInternal Server Error: \/(.*)\/\nok$/gm,
    /^(.*?)\s\.\.\.\sSystem check identified no issues \(0 silenced\)\nok$/gm,
  ]) {
    for (const m of log.matchAll(pattern)) map.set(m[1], 'PASSED');
  }
  return map;
}

function sympy(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const m of log.matchAll(/(_*) (.*)\.py:(.*) (_*)/g)) map.set(`${m[2]}.py:${m[3]}`, 'FAILED');
  for (const raw of log.split('\n')) {
    const line = raw.trim();
    if (!line.startsWith('test_')) continue;
    const name = line.split(/\s+/)[0];
    if (line.endsWith(' E')) map.set(name, 'ERROR');
    if (line.endsWith(' F')) map.set(name, 'FAILED');
    if (line.endsWith(' ok')) map.set(name, 'PASSED');
  }
  return map;
}

function seaborn(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const line of log.split('\n')) {
    const parts = fields(line);
    if (parts.length < 2) continue;
    if (line.startsWith('FAILED')) map.set(parts[1], 'FAILED');
    else if (line.includes(' PASSED ')) {
      if (parts[1] === 'PASSED') map.set(parts[0], 'PASSED');
    } else if (line.startsWith('PASSED')) map.set(parts[1], 'PASSED');
  }
  return map;
}

export const parsers = {
  pytest: (log: string) => pytest(log),
  'pytest-options': (log: string) => pytest(log, shortenPathOption),
  'pytest-v2': pytestV2,
  django,
  sympy,
  // matplotlib's parametrized ids print enum members; its expected ids use their values.
  matplotlib: (log: string) =>
    pytest(log, undefined, (l) => l.replaceAll('MouseButton.LEFT', '1').replaceAll('MouseButton.RIGHT', '3')),
  seaborn,
} satisfies Record<string, (log: string) => StatusMap>;
export type ParserName = keyof typeof parsers;

const byRepo: Record<string, ParserName> = {
  'astropy/astropy': 'pytest-v2',
  'django/django': 'django',
  'matplotlib/matplotlib': 'matplotlib',
  'mwaskom/seaborn': 'seaborn',
  'psf/requests': 'pytest-options',
  'pydicom/pydicom': 'pytest-options',
  'pylint-dev/pylint': 'pytest-options',
  'scikit-learn/scikit-learn': 'pytest-v2',
  'sphinx-doc/sphinx': 'pytest-v2',
  'sympy/sympy': 'sympy',
};

/** The parser SWE-bench uses for a repository (pytest for the rest, as for flask, xarray, pytest, astroid, …). */
export function parserForRepo(repo: string): ParserName {
  return byRepo[repo] ?? 'pytest';
}

/**
 * The official harness's parser names (v5 rows carry them in `log_parser`) for the Python repos, as alight's parsers.
 */
const officialNames: Record<string, ParserName> = {
  parse_log_pytest: 'pytest',
  parse_log_pytest_options: 'pytest-options',
  parse_log_pytest_v2: 'pytest-v2',
  parse_log_django: 'django',
  parse_log_sympy: 'sympy',
  parse_log_matplotlib: 'matplotlib',
  parse_log_seaborn: 'seaborn',
  parse_log_astroid: 'pytest',
  parse_log_flask: 'pytest',
  parse_log_marshmallow: 'pytest',
  parse_log_pvlib: 'pytest',
  parse_log_pyvista: 'pytest',
  parse_log_sqlfluff: 'pytest',
  parse_log_xarray: 'pytest',
  parse_log_pydicom: 'pytest-options',
  parse_log_requests: 'pytest-options',
  parse_log_pylint: 'pytest-options',
  parse_log_astropy: 'pytest-v2',
  parse_log_scikit: 'pytest-v2',
  parse_log_sphinx: 'pytest-v2',
};

/** A row's `log_parser`, in alight's names or the official ones; undefined for a name neither has. */
export function parserNamed(name: string): ParserName | undefined {
  return name in parsers ? (name as ParserName) : officialNames[name];
}

/** The official name of one of alight's parsers (for rows handed to the official harness). */
export function officialParserName(name: ParserName): string {
  return `parse_log_${name.replaceAll('-', '_')}`;
}
