// The task's verifier: reasoning-gym's `compute_decimal_reward` (chain_sum's `score_answer`, reasoning_gym/utils.py,
// Apache-2.0) in JavaScript, so that the harness needs no Python: 1 when the answer and the oracle are the same decimal
// number (sign, leading zeros, trailing decimals and commas tolerated), else len(oracle) / len(answer) when the oracle
// is inside the answer, else 0. test/unit/arithmetic-verifier.test.ts checks it against the Python original.

/** The value a Python `Decimal(text)` reads, as a canonical string (equal strings, equal values), or null where it
 * raises. Zero has no sign (Decimal('-0') == 0); NaN equals nothing. */
function decimal(text) {
  const t = text.trim();
  if (/^[+-]?(inf|infinity)$/i.test(t)) return t.startsWith('-') ? '-inf' : 'inf';
  const m = /^([+-])?(\d(?:_?\d)*)?(?:\.(\d(?:_?\d)*)?)?(?:[eE]([+-]?\d(?:_?\d)*))?$/.exec(t);
  if (!m || (m[2] === undefined && m[3] === undefined)) return null;
  const [int, frac] = [(m[2] ?? '').replaceAll('_', ''), (m[3] ?? '').replaceAll('_', '')];
  let digits = `${int}${frac}`.replace(/^0+/, '');
  let exp = BigInt((m[4] ?? '0').replaceAll('_', '')) - BigInt(frac.length);
  if (digits === '') return '0';
  while (digits.endsWith('0')) [digits, exp] = [digits.slice(0, -1), exp + 1n];
  return `${m[1] === '-' ? '-' : ''}${digits}e${exp}`;
}

export function computeDecimalReward(answer, oracle) {
  if (answer == null || answer.length === 0) return 0;
  const a = answer.replaceAll(',', '');
  const o = oracle.replaceAll(',', '');
  const [x, y] = [decimal(a), decimal(o)];
  if (x !== null && y !== null && x === y) return 1;
  return a.includes(o) ? o.length / a.length : 0;
}

/** The answer the harness hands the verifier: the last number in the reply (the reply itself when it has none). */
export function finalAnswer(reply) {
  const numbers = reply.match(/-?\d+(?:\.\d+)?/g);
  return numbers ? numbers[numbers.length - 1] : reply.trim();
}
