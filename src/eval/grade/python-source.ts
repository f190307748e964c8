import { readFileSync } from 'node:fs';
import { probe } from '../../process/launch.js';
import { testPython } from './interpreter.js';

/**
 * A Python file as the interpreter reads it, not as its bytes look, so that the tamper flags (tamper-flags.ts) match
 * what will run: decoded by its declared source encoding (PEP 263), and NFKC-normalised as the parser normalises
 * identifiers (`ｓｙｓ.ｍｏｄｕｌｅｓ` is `sys.modules`). An encoding that turns ASCII bytes into other characters
 * (`unicode_escape`, `utf-7`: `\x73ys` is `sys`) shows a reader different code from what runs; `rewritten` says so.
 */
export interface PythonSource {
  text: string;
  rewritten: boolean;
}

// PEP 263's cookie, on the first or second line.
const cookie = /^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)/;
const plain = new Set(['utf-8', 'utf8', 'utf-8-sig', 'ascii', 'us-ascii']);

// Python's own reading: tokenize finds the encoding (a BOM, the cookie) exactly as the import system does.
const decode =
  'import sys, tokenize\nf = open(sys.argv[1], "rb")\nenc = tokenize.detect_encoding(f.readline)[0]\nf.seek(0)\n' +
  'sys.stdout.buffer.write(f.read().decode(enc).encode("utf-8", "surrogatepass"))';

/** Only the ASCII characters of a text: what an ASCII-compatible encoding leaves as the bytes were. */
const asciiOf = (s: string): string => s.replace(/[^\p{ASCII}]/gu, '');

export function readPythonSource(path: string): PythonSource {
  const bytes = readFileSync(path);
  const raw = bytes.toString('utf8');
  const declared = raw
    .split('\n', 2)
    .map((line) => cookie.exec(line)?.[1])
    .find(Boolean);
  if (!declared || plain.has(declared.toLowerCase().replaceAll('_', '-'))) return { text: nfkc(raw), rewritten: false };
  const res = probe(testPython(), ['-I', '-S', '-c', decode, path], { cwd: '/' });
  // A source Python cannot decode does not import: nothing of it runs, read it as it looks.
  if (res.exitCode !== 0) return { text: nfkc(raw), rewritten: false };
  return { text: nfkc(res.stdout), rewritten: asciiOf(res.stdout) !== asciiOf(bytes.toString('latin1')) };
}

export const nfkc = (s: string): string => s.normalize('NFKC');
