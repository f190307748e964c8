import { conftestFile, testFile } from '../../data/patch.js';

/**
 * Reward-hacking guards (research notes §3.6): a prediction's edits to tests, test configuration or interpreter
 * start-up hooks are flagged and, unless allowed, removed before grading; binary hunks are removed too (they cannot be
 * reviewed or applied as text).
 */
/**
 * git's own files: a repository's config names commands (filters, hooks, drivers) that git runs, and attributes name
 * those filters. Refused even with --allow-test-edits: no grade needs them, and the graders never run git on them.
 */
export const gitMetadata = 'git metadata (its config and attributes name commands for git to run)';
const gitPath = /(^|\/)(\.git(\/|$)|\.git(attributes|modules)$)/i;

const protectedPaths: [RegExp, string][] = [
  [gitPath, gitMetadata],
  [conftestFile, 'conftest.py (pytest hooks can rewrite outcomes)'],
  [
    /(^|\/)(\.?pytest\.ini|\.?pytest\.toml|tox\.ini|setup\.cfg|pyproject\.toml|noxfile\.py)$/,
    'test runner configuration',
  ],
  [/(^|\/)(site|user)customize\.py$|\.pth$/, 'interpreter start-up hook'],
  [/\.(dist|egg)-info(\/|$)/, 'package metadata (entry points load pytest plugins)'],
  [testFile, 'test file'],
];

/** Why a path is protected, or null. */
export function protectedReason(path: string): string | null {
  return protectedPaths.find(([pattern]) => pattern.test(path))?.[1] ?? null;
}

export interface GuardResult {
  /** The prediction as it will be graded. */
  patch: string;
  flags: { file: string; reason: string; removed: boolean }[];
}

export interface FileSection {
  /** The file the section changes (its new path; the old one for a deletion). */
  file: string;
  /** Every path the section names: both sides of the header, a rename's source and target. */
  paths: string[];
  text: string;
}

/**
 * Splits a unified diff into per-file sections: at each `diff --git` header, and at each `---`/`+++` pair outside one
 * (git apply and patch accept plain diffs too, so a guard that only looked at `diff --git` could be walked around).
 */
export function fileSections(patch: string): FileSection[] {
  const lines = patch.split('\n');
  const sections: { lines: string[]; git: boolean; hunk: boolean; paths: Set<string>; file: string | null }[] = [];
  let current: (typeof sections)[number] | null = null;
  lines.forEach((line, i) => {
    const git = line.startsWith('diff --git ');
    const plain =
      line.startsWith('--- ') && (lines[i + 1] ?? '').startsWith('+++ ') && !(current?.git && !current.hunk);
    if (git || plain) {
      current = { lines: [], git, hunk: false, paths: new Set(), file: null };
      sections.push(current);
    }
    if (!current) return;
    current.lines.push(line);
    if (line.startsWith('@@')) current.hunk = true;
    for (const path of pathsIn(line)) current.paths.add(path);
    if (line.startsWith('+++ ')) current.file = pathsIn(line)[0] ?? current.file;
  });
  return sections.map((s) => {
    const paths = [...s.paths];
    return {
      file: s.file ?? paths[paths.length - 1] ?? '',
      paths,
      text: `${s.lines.join('\n')}${s.lines.at(-1) === '' ? '' : '\n'}`,
    };
  });
}

const cEscapes: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

/**
 * A C-quoted name as git and GNU patch read it (`"b/.g\151t"` is b/.git, octal escapes are bytes of UTF-8): read as
 * written, a quoted name would walk around every pattern below.
 */
export function unquoteName(name: string): string {
  if (!/^".*"$/.test(name)) return name;
  const bytes = Buffer.from(name.slice(1, -1), 'utf8').toString('latin1');
  const decoded = bytes.replace(/\\([0-7]{3}|[\s\S])/g, (_all, e: string) =>
    e.length === 3 ? String.fromCharCode(Number.parseInt(e, 8) & 0xff) : (cEscapes[e] ?? e),
  );
  return Buffer.from(decoded, 'latin1').toString('utf8');
}

/** The paths a header line names, without the a/ b/ prefixes and quotes; /dev/null is not a path. */
function pathsIn(line: string): string[] {
  const unquote = (p: string): string => unquoteName(p).replace(/^[ab]\//, '');
  let names: string[] = [];
  const git = /^diff --git ("[^"]*"|\S+) ("[^"]*"|\S+)$/.exec(line);
  if (git) names = [git[1], git[2]];
  else if (/^(---|\+\+\+) /.test(line)) names = [line.slice(4).split('\t')[0]];
  else if (/^(rename|copy) (from|to) /.test(line)) names = [line.replace(/^(rename|copy) (from|to) /, '')];
  return names.map(unquote).filter((p) => p && p !== '/dev/null');
}

// Lines that start a diff's file or hunk in any format GNU patch reads (unified, context, normal).
const diffHeader = /^(\*\*\* |--- |\+\+\+ |@@ |\d+(,\d+)?[acd]\d+(,\d+)?$)/gm;

export function guardPatch(patch: string, allowTestEdits: boolean): GuardResult {
  const flags: GuardResult['flags'] = [];
  const kept: string[] = [];
  const sections = fileSections(patch);
  // Only unified-diff sections are kept: a context or normal diff (which GNU patch would apply) is removed, and said.
  const outside =
    (patch.match(diffHeader)?.length ?? 0) - sections.reduce((n, s) => n + (s.text.match(diffHeader)?.length ?? 0), 0);
  if (outside > 0)
    flags.push({
      file: '(not a unified diff)',
      reason: 'diff text in another format than unified (context or normal diffs), which only GNU patch reads',
      removed: true,
    });
  for (const section of sections) {
    if (/^GIT binary patch$|^Binary files .* differ$/m.test(section.text)) {
      flags.push({ file: section.file, reason: 'binary hunk', removed: true });
      continue;
    }
    // GNU patch drops a name's trailing blanks, git keeps them: either reading counts.
    const hit = protectedPaths.find(([pattern]) =>
      section.paths.some((p) => pattern.test(p) || pattern.test(p.trimEnd())),
    );
    if (hit) {
      const removed = !allowTestEdits || hit[1] === gitMetadata;
      flags.push({ file: section.file, reason: hit[1], removed });
      if (removed) continue;
    }
    kept.push(section.text);
  }
  return { patch: kept.join(''), flags };
}
