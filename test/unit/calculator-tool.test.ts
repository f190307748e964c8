import { describe, expect, it } from 'vitest';
import { teacherAnswer } from '../../bench/agent/teacher.js';
// @ts-expect-error: the example is plain JavaScript, as a user's harness is
import { calculate } from '../../examples/calculator/calculator.mjs';

// The calculator example's tool (examples/calculator/calculator.mjs) and bench:agent's warm-up teacher.
describe('the calculator tool', () => {
  it.each([
    ['9233 * 9385', '86651705'],
    ['2 + 3 * 4', '14'],
    ['(1 + 2) * 3', '9'],
    ['-3 * 2', '-6'],
    ['7 / 2', '3.5'],
    ['8 / 4', '2'],
    ['123456789 * 987654321', '121932631112635269'], // exact past 2^53
    ['1.5 * 2', '3'],
  ])('%s = %s', (expression, value) => expect(calculate(expression)).toBe(value));

  it.each([['1 +'], ['2 ** 3'], ['(1 + 2'], ['x * 2'], ['']])('reports %j as an error, not a throw', (expression) =>
    expect(calculate(expression)).toMatch(/^error: /),
  );
});

describe("bench:agent's warm-up teacher", () => {
  const tools = [{ function: { name: 'calculate' } }];
  it("calls the first tool with the question's expression, then answers with the tool's result", () => {
    const asked = {
      role: 'user',
      content: 'State the final answer to the following arithmetic problem: 12 + 30 - 4 =',
    };
    const call = teacherAnswer({ messages: [asked], tools }) as {
      message: { tool_calls: { function: { name: string; arguments: string } }[] };
      finish: string;
    };
    expect(call.finish).toBe('tool_calls');
    expect(call.message.tool_calls[0].function).toEqual({
      name: 'calculate',
      arguments: JSON.stringify({ expression: '12 + 30 - 4' }),
    });
    const answer = teacherAnswer({ messages: [asked, { role: 'tool', content: '38' }], tools });
    expect(answer).toEqual({ message: { role: 'assistant', content: '38' }, finish: 'stop' });
  });
});
