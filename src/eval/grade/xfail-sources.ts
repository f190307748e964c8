import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { probe } from '../../process/launch.js';
import type { GuardResult } from './guards.js';
import type { StatusMap } from './log-parsers.js';

/**
 * Where an expected failure may come from: the test sources as the grader applied them, read before the tests run
 * (they are in the writable workspace during the run). An XFAIL counts as a pass under SWE-bench's rule; here only for a
 * test whose own source declares one (a decorator, a `pytestmark`, a call in its body, a mark on its class or module, a
 * name bound to an xfail mark at the module's top), or whose folder's `conftest.py` mentions xfail (a repository's
 * own hooks may mark tests). Any other XFAIL was made by the code under test, whatever way it found (an outcome
 * exception, a marker added through the framework's objects, a forged report), and counts as a failure: the fact is
 * read here, outside the process it could tamper with.
 */
export interface XfailSources {
  /** Test files (relative to the workspace) whose every test may xfail. */
  wholeFiles: Set<string>;
  /** `file::Class::test` (no parameters) of each test whose source declares an xfail. */
  tests: Set<string>;
}

// Python's own parser over the files (nothing of them runs): for each, whether a module-level mark or a conftest
// covers every test, and the qualified names of the tests that declare one themselves.
const script = `
import ast, json, sys
def mentions(node, names):
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute) and n.attr == "xfail" or isinstance(n, ast.Name) and (n.id == "xfail" or n.id in names):
            return True
    return False
out = {}
for path, text in json.load(sys.stdin).items():
    try:
        tree = ast.parse(bytes.fromhex(text))
    except (OSError, SyntaxError, ValueError):
        continue
    names = set()
    for st in tree.body:
        if isinstance(st, (ast.Assign, ast.AnnAssign)) and st.value is not None and mentions(st.value, names):
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    whole = "pytestmark" in names
    tests = []
    def walk(body, prefix, inherited):
        for st in body:
            if isinstance(st, ast.ClassDef):
                own = any(mentions(d, names) for d in st.decorator_list) or any(
                    isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in s.targets)
                    and mentions(s.value, names) for s in st.body)
                walk(st.body, prefix + st.name + "::", inherited or own)
            elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if inherited or mentions(st, names):  # its decorators, its parameters' marks and its body
                    tests.append(prefix + st.name)
    walk(tree.body, "", False)
    out[path] = {"whole": whole or path.endswith("conftest.py") and mentions(tree, names), "tests": tests}
print(json.dumps(out))
`;

/**
 * The test files (relative to `ws`) and the conftest.py files in their folders up to `ws`, as they are now: read before
 * the tests run, parsed only if the log shows an XFAIL (most grades show none, and a Python start is a tenth of a
 * small suite's grade).
 */
export function testSources(ws: string, testFiles: string[]): TestSources {
  const files = testFiles.filter((f) => f.endsWith('.py') && existsSync(join(ws, f)));
  const conftests = new Map(files.map((f) => [f, conftestsOf(ws, f)]));
  const all = [...new Set([...files, ...[...conftests.values()].flat()])];
  return { files, conftests, text: new Map(all.map((f) => [f, readFileSync(join(ws, f))])) };
}

export interface TestSources {
  files: string[];
  conftests: Map<string, string[]>;
  text: Map<string, Buffer>;
}

/** Which of the sources declare an xfail, by Python's parser (`python`: the interpreter to ask). */
export function xfailSources(sources: TestSources, python: string): XfailSources {
  const input = JSON.stringify(Object.fromEntries([...sources.text].map(([f, b]) => [f, b.toString('hex')])));
  const res = probe(python, ['-I', '-S', '-c', script], { cwd: '/', input });
  const read: Record<string, { whole: boolean; tests: string[] }> = res.exitCode === 0 ? JSON.parse(res.stdout) : {};
  const of = (f: string) => read[f] ?? { whole: false, tests: [] };
  return {
    wholeFiles: new Set(sources.files.filter((f) => of(f).whole || sources.conftests.get(f)!.some((c) => of(c).whole))),
    tests: new Set(sources.files.flatMap((f) => of(f).tests.map((t) => `${f}::${t}`))),
  };
}

function conftestsOf(ws: string, file: string): string[] {
  const found: string[] = [];
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const c = dir === '.' ? 'conftest.py' : `${dir}/conftest.py`;
    if (existsSync(join(ws, c))) found.push(c);
    if (dir === '.') return found;
  }
}

/**
 * The log's statuses with every XFAIL of a pytest test (`file::name`) whose source declares none made a FAILED, and a
 * flag for each; `read` (the sources parsed) only runs when the log has an XFAIL.
 */
export function undeclaredXfails(
  map: StatusMap,
  read: () => XfailSources,
): { map: StatusMap; flags: GuardResult['flags'] } {
  const flags: GuardResult['flags'] = [];
  const out: StatusMap = new Map(map);
  if (![...map.values()].includes('XFAIL')) return { map: out, flags };
  const sources = read();
  for (const [name, status] of map) {
    if (status !== 'XFAIL' || !name.includes('::')) continue;
    const file = name.split('::')[0];
    const test = name.replace(/\[.*$/, '');
    if (sources.wholeFiles.has(file) || sources.tests.has(test)) continue;
    out.set(name, 'FAILED');
    flags.push({
      file,
      reason: `xfail-without-mark: ${name} expected to fail, but its source declares no xfail`,
      removed: false,
    });
  }
  return { map: out, flags };
}
