import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// A prediction that fixes the fixture's bug (swe-repo.ts) and, when the tests import it, looks for what the grading host
// must not show the code under test: secrets in any process's environment, known paths (the real HOME, the bundle
// cache, --repos, the project's store), and anything carrying a marker in the whole visible file system, git's objects
// included (every repository it finds: every ref, the reflog, every object, packed or loose). It says what it found, or how
// much it searched, in a warning (pytest's warnings summary prints it whole, so the log shows that it ran); what it
// finds also fails the import, and finding nothing the fix is graded as any other.

export interface Probe {
  /** Strings that exist only where the code under test must not look. */
  markers: string[];
  /** Paths that must not exist inside. */
  paths: string[];
}

// The markers go in hex: the probe's own source (the workspace, the compiled module) must not carry them.
const hex = (s: string): string => Buffer.from(s).toString('hex');

const probeSource = (p: Probe): string[] => [
  '',
  '',
  'def _probe():',
  '    import os, subprocess, warnings',
  `    markers = [bytes.fromhex(m).decode() for m in ${JSON.stringify(p.markers.map(hex))}]`,
  `    paths = [bytes.fromhex(m).decode() for m in ${JSON.stringify(p.paths.map(hex))}]`,
  '    hit = lambda text: any(m in text for m in markers)',
  '    found, names = [], set(os.environ)',
  '    found += [f"env {k}" for k, v in os.environ.items() if hit(v)]',
  '    for pid in filter(str.isdigit, os.listdir("/proc")):',
  '        try:',
  '            env = open(f"/proc/{pid}/environ", "rb").read().decode("latin1")',
  '        except OSError:',
  '            continue',
  '        names |= {e.split("=", 1)[0] for e in env.split("\\0") if e}',
  '        found += [f"/proc/{pid}/environ"] if hit(env) else []',
  '    found += [p for p in paths if os.path.lexists(p)]',
  '    if found:',
  '        _say(f"PROBE FOUND {\', \'.join(found)}")',
  '    files = repos = 0',
  '    for root, dirs, files_here in os.walk("/"):',
  '        if root == "/":',
  '            dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev")]',
  '        if "HEAD" in files_here and "objects" in dirs:',
  '            repos += 1',
  '            git = lambda *a: subprocess.run(["git", "--git-dir", root, *a], capture_output=True).stdout',
  '            text = git("log", "--all", "--reflog", "-p") + git("remote", "-v")',
  '            text += git("cat-file", "--batch-all-objects", "--batch")',
  '            found += [f"git {root}"] if hit(text.decode("latin1")) else []',
  '        for name in files_here:',
  '            files += 1',
  '            path = os.path.join(root, name)',
  '            try:',
  '                if hit(path) or (os.path.isfile(path) and os.path.getsize(path) < 1 << 20',
  '                                 and hit(open(path, "rb").read().decode("latin1"))):',
  '                    found.append(path)',
  '            except OSError:',
  '                pass',
  '    if found:',
  '        _say(f"PROBE FOUND {\', \'.join(found[:20])}")',
  '    warnings.warn(f"PROBE searched {files} files, {repos} repositories; environment: {sorted(names)}")',
  '',
  '',
  'def _say(what):',
  '    import warnings',
  '    warnings.warn(what)',
  '    raise RuntimeError("PROBE FOUND")',
  '',
  '',
  '_probe()',
];

/** The probe as a git diff of calc.py against `base` in `repo` (the fix and the probe), made by git. */
export function probePatch(repo: string, base: string, probe: Probe, scratch: string): string {
  execFileSync('git', ['clone', '-q', repo, scratch]);
  execFileSync('git', ['checkout', '-q', base], { cwd: scratch });
  const file = join(scratch, 'calc.py');
  writeFileSync(file, `${readFileSync(file, 'utf8').replace('a - b', 'a + b')}${probeSource(probe).join('\n')}\n`);
  return `${execFileSync('git', ['diff'], { cwd: scratch, encoding: 'utf8' }).trim()}\n`;
}

/**
 * What the probe said in a test log: what it found, or how much it searched and the environment's names (its warnings,
 * not its source, which an eval script's `git diff` prints too).
 */
export function probeSaid(log: string): { found: string } | { files: number; repos: number; env: string[] } | null {
  const found = /Warning: PROBE FOUND ([^\n]+)/.exec(log);
  if (found) return { found: found[1] };
  const searched = /Warning: PROBE searched (\d+) files, (\d+) repositories; environment: \[([^\]]*)\]/.exec(log);
  if (!searched) return null;
  const env = searched[3].split(',').map((n) => n.trim().replace(/^'|'$/g, ''));
  return { files: Number(searched[1]), repos: Number(searched[2]), env: env.filter(Boolean) };
}
