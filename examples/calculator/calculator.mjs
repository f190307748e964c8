// The agent's tool: an arithmetic expression's value (+ - * / and parentheses over decimal numbers), read by a small
// recursive-descent parser, never by eval. Integers stay exact (BigInt) while no division makes them fractional.

/** The value of `expression` as text, or an error's text (a tool reports errors to the model, it does not throw). */
export function calculate(expression) {
  const tokens = String(expression).match(/\d+(?:\.\d+)?|[-+*/()]|\S/g) ?? [];
  let at = 0;
  const peek = () => tokens[at];
  const num = (t) => (/^\d+$/.test(t) ? BigInt(t) : Number(t));
  const apply = (op, a, b) => {
    if (typeof a !== typeof b) [a, b] = [Number(a), Number(b)];
    if (op === '/' && typeof a === 'bigint') return b !== 0n && a % b === 0n ? a / b : Number(a) / Number(b);
    return { '+': a + b, '-': a - b, '*': a * b, '/': a / b }[op];
  };
  const factor = () => {
    const t = tokens[at++];
    if (t === '-') return apply('-', 0n, factor());
    if (t === '(') {
      const v = sum();
      if (tokens[at++] !== ')') throw new Error('a ( without its )');
      return v;
    }
    if (t !== undefined && /^\d/.test(t)) return num(t);
    throw new Error(t === undefined ? 'the expression ends too soon' : `unexpected ${t}`);
  };
  const chain = (next, ops) => {
    let v = next();
    while (ops.includes(peek())) v = apply(tokens[at++], v, next());
    return v;
  };
  const product = () => chain(factor, ['*', '/']);
  const sum = () => chain(product, ['+', '-']);
  try {
    const v = sum();
    if (at < tokens.length) throw new Error(`unexpected ${tokens[at]}`);
    return String(v);
  } catch (err) {
    return `error: ${err.message}`;
  }
}
