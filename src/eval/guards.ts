/**
 * Reward-hacking guards (research notes §3.6): a prediction's edits to tests, test configuration or interpreter
 * start-up hooks are flagged and, unless allowed, removed before grading; binary hunks are removed too (they cannot be
 * reviewed or applied as text).
 */
const protectedPaths: [RegExp, string][] = [
  [/(^|\/)conftest\.py$/, 'conftest.py (pytest hooks can rewrite outcomes)'],
  [/(^|\/)(pytest\.ini|tox\.ini|setup\.cfg|pyproject\.toml|noxfile\.py)$/, 'test runner configuration'],
  [/(^|\/)sitecustomize\.py$|\.pth$/, 'interpreter start-up hook'],
  [/(^|\/)(tests?|testing)\/|(^|\/)test_[^/]*\.py$|_tests?\.py$/, 'test file'],
];

export interface GuardResult {
  /** The prediction as it will be graded. */
  patch: string;
  flags: { file: string; reason: string; removed: boolean }[];
}

/** Splits a unified diff into per-file sections (each starting with `diff --git`). */
export function fileSections(patch: string): { file: string; text: string }[] {
  const parts = patch.split(/(?=^diff --git )/m).filter((p) => p.startsWith('diff --git '));
  return parts.map((text) => ({ file: /^diff --git a\/(.*?) b\//.exec(text)?.[1] ?? text.slice(11, text.indexOf('\n')), text }));
}

export function guardPatch(patch: string, allowTestEdits: boolean): GuardResult {
  const flags: GuardResult['flags'] = [];
  const kept: string[] = [];
  for (const section of fileSections(patch)) {
    if (/^GIT binary patch$|^Binary files .* differ$/m.test(section.text)) {
      flags.push({ file: section.file, reason: 'binary hunk', removed: true });
      continue;
    }
    const hit = protectedPaths.find(([pattern]) => pattern.test(section.file));
    if (hit) {
      flags.push({ file: section.file, reason: hit[1], removed: !allowTestEdits });
      if (!allowTestEdits) continue;
    }
    kept.push(section.text);
  }
  // Text before the first `diff --git` (a bare ---/+++ diff) is kept as it is: git apply will judge it.
  const head = patch.startsWith('diff --git ') ? '' : patch.split(/^diff --git /m)[0];
  return { patch: head + kept.join(''), flags };
}
