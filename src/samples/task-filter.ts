import { AlightError, ExitCode } from '../errors.js';

/**
 * `samples curate --filter`: which tasks keep their rollouts, from what their rollouts scored, e.g. `0<avg<1`,
 * `solved>=1 and n>=4`, `pass@4>0.5`. A small language parsed here, never evaluated as code: numbers, the names below,
 * comparisons (chained as in `0<avg<1`), `and`.
 */
export interface TaskStats {
  /** Rollouts with a reward. */
  n: number;
  avg: number;
  min: number;
  max: number;
  /** Rollouts whose reward reached the solved threshold. */
  solved: number;
}

export type TaskFilter = (stats: TaskStats) => boolean;

const names = ['avg', 'min', 'max', 'n', 'solved', 'rate', 'pass@k'] as const;
const comparisons = {
  '<': (a: number, b: number) => a < b,
  '<=': (a: number, b: number) => a <= b,
  '>': (a: number, b: number) => a > b,
  '>=': (a: number, b: number) => a >= b,
  '==': (a: number, b: number) => a === b,
  '!=': (a: number, b: number) => a !== b,
} satisfies Record<string, (a: number, b: number) => boolean>;
type Comparison = keyof typeof comparisons;

type Operand = (s: TaskStats) => number;
type Token = { kind: 'number' | 'name' | 'op' | 'and'; text: string };

/** The unbiased pass@k estimate from n samples of which c passed: 1 − C(n−c, k) / C(n, k) (Chen et al., 2021). */
export function passAtK(n: number, c: number, k: number): number {
  if (n - c < k) return 1;
  let fail = 1;
  for (let i = n - c + 1; i <= n; i++) fail *= 1 - k / i;
  return 1 - fail;
}

function variable(name: string): Operand | null {
  const at = /^pass@(\d+)$/.exec(name);
  if (at) {
    const k = Number(at[1]);
    return (s) => (s.n < k ? Number.NaN : passAtK(s.n, s.solved, k));
  }
  switch (name) {
    case 'avg':
    case 'min':
    case 'max':
    case 'n':
    case 'solved':
      return (s) => s[name];
    case 'rate':
      return (s) => (s.n ? s.solved / s.n : Number.NaN);
    default:
      return null;
  }
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  const pattern = /\s*(?:(\d+(?:\.\d+)?|\.\d+)|(<=|>=|==|!=|<|>)|(&&|and\b)|([a-z]+(?:@\d+)?))/iy;
  let at = 0;
  while (at < text.length) {
    if (!text.slice(at).trim()) break;
    pattern.lastIndex = at;
    const m = pattern.exec(text);
    if (!m) throw bad(text, `cannot read "${text.slice(at).trim()}"`);
    at = pattern.lastIndex;
    if (m[1]) tokens.push({ kind: 'number', text: m[1] });
    else if (m[2]) tokens.push({ kind: 'op', text: m[2] });
    else if (m[3]) tokens.push({ kind: 'and', text: m[3] });
    else tokens.push({ kind: 'name', text: m[4].toLowerCase() });
  }
  return tokens;
}

const bad = (text: string, why: string): AlightError =>
  new AlightError(
    `--filter "${text}": ${why} (comparisons of ${names.join(', ')} and numbers, joined by "and"; e.g. "0<avg<1")`,
    ExitCode.usage,
  );

/** The filter a `--filter` expression says; a clear usage error for anything else. */
export function parseTaskFilter(text: string): TaskFilter {
  const clauses: Token[][] = [[]];
  for (const t of tokenize(text)) {
    if (t.kind === 'and') clauses.push([]);
    else clauses[clauses.length - 1].push(t);
  }
  const tests = clauses.map((clause) => parseClause(text, clause));
  // NaN (pass@k with fewer than k rollouts, rate of none) fails every comparison: the task is left out.
  return (s) => tests.every((test) => test(s));
}

/** `a op b (op c)*`, operands alternating with comparisons, at least one of them a name. */
function parseClause(text: string, clause: Token[]): TaskFilter {
  if (clause.length < 3 || clause.length % 2 === 0) throw bad(text, 'a comparison is incomplete');
  const operands: Operand[] = [];
  const ops: Comparison[] = [];
  clause.forEach((t, i) => {
    if (i % 2 === 1) {
      if (t.kind !== 'op') throw bad(text, `expected a comparison, found "${t.text}"`);
      ops.push(t.text as Comparison);
    } else if (t.kind === 'number') operands.push(() => Number(t.text));
    else if (t.kind === 'name') operands.push(variable(t.text) ?? throwing(bad(text, `unknown name "${t.text}"`)));
    else throw bad(text, `expected a number or a name, found "${t.text}"`);
  });
  if (!clause.some((t) => t.kind === 'name')) throw bad(text, 'a comparison names nothing about the task');
  return (s) => ops.every((op, i) => comparisons[op](operands[i](s), operands[i + 1](s)));
}

function throwing(err: Error): never {
  throw err;
}
