// The Markdown check `npm run lint` runs over the repository's own pages: code fences that close (a doubled fence once
// hid half the README from every renderer), and relative links whose file and heading anchor exist. Prints each
// problem as file:line and exits 1 when there is one.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export interface Problem {
  file: string;
  line: number;
  message: string;
}

const fence = /^ {0,3}(`{3,}|~{3,})(.*)$/;

/** Each line's text outside code blocks (null inside one), and the fence problems. */
export function proseLines(text: string): { lines: (string | null)[]; problems: Omit<Problem, 'file'>[] } {
  const lines: (string | null)[] = [];
  const problems: Omit<Problem, 'file'>[] = [];
  let open: { marker: string; line: number } | null = null;
  text.split('\n').forEach((l, i) => {
    const m = fence.exec(l);
    if (!open) {
      lines.push(m ? null : l);
      if (m) open = { marker: m[1], line: i + 1 };
      return;
    }
    lines.push(null);
    if (!m || m[1][0] !== open.marker[0] || m[1].length < open.marker.length) return;
    // A closing fence carries no info string: one that does is the opening of a block above left unclosed.
    if (m[2].trim() === '') open = null;
    else
      problems.push({
        line: i + 1,
        message: `a fence with "${m[2].trim()}" inside the block opened at line ${open.line}`,
      });
  });
  if (open) problems.push({ line: (open as { line: number }).line, message: 'a code fence never closed' });
  return { lines, problems };
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2. */
export function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of proseLines(text).lines) {
    for (const m of line?.matchAll(/<a (?:id|name)="([^"]+)"/g) ?? []) anchors.add(m[1]);
    const h = line && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const plain = h[1].replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const base = plain
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Relative links of one page whose file or heading does not exist. */
export function linkProblems(file: string, text: string, readPage: (path: string) => string | null): Problem[] {
  const problems: Problem[] = [];
  const { lines } = proseLines(text);
  lines.forEach((line, i) => {
    if (line === null) return;
    const prose = line.replace(/`[^`]*`/g, '');
    for (const m of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1];
      if (/^[a-z]+:/i.test(target)) continue;
      const [path, anchor] = target.split('#', 2);
      const resolved = path ? resolve(dirname(file), decodeURI(path)) : file;
      const where = { file, line: i + 1 };
      if (path && !existsSync(resolved)) {
        problems.push({ ...where, message: `links to ${path}, which does not exist` });
        continue;
      }
      if (anchor === undefined || !resolved.endsWith('.md')) continue;
      const page = readPage(resolved);
      if (page !== null && !anchorsOf(page).has(anchor))
        problems.push({ ...where, message: `links to #${anchor}, a heading ${path || 'this page'} does not have` });
    }
  });
  return problems;
}

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (name.startsWith('.') || name === 'node_modules' || name === 'dist') return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownFiles(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

export function checkTree(root: string): Problem[] {
  const cache = new Map<string, string | null>();
  const readPage = (path: string): string | null => {
    if (!cache.has(path)) cache.set(path, existsSync(path) ? readFileSync(path, 'utf8') : null);
    return cache.get(path)!;
  };
  return markdownFiles(root).flatMap((file) => {
    const text = readPage(file)!;
    const fences = proseLines(text).problems.map((p) => ({ ...p, file }));
    return [...fences, ...linkProblems(file, text, readPage)];
  });
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  const root = resolve(new URL('..', import.meta.url).pathname);
  const problems = checkTree(root);
  for (const p of problems) process.stderr.write(`${relative(root, p.file)}:${p.line}: ${p.message}\n`);
  if (problems.length) process.exit(1);
}
