import { describe, expect, it } from 'vitest';
import { diagnose } from '../../src/samples/diagnose.js';
import { mergeCalls } from '../../src/samples/merge.js';

// A toy tokenizer: one character per token (its code), plus 1000 = "cd" as a single token.
const ids = (text: string): number[] => [...text].map((c) => c.charCodeAt(0));
const detokenize = (tokens: readonly number[]): string =>
  tokens.map((t) => (t === 1000 ? 'cd' : String.fromCharCode(t))).join('');
const history = 'system: be brief. user: what is ab';
const H = ids(history).length;
// The row's first answer starts after its first prompt (the history); `last` is where its last answer starts.
const at = (last: number) => ({ first: H, last });

describe('merge-break diagnosis', () => {
  it('calls the same text with other ids a retokenization', () => {
    const context = [...ids(history), ...ids('ab'), 1000, ...ids('e')]; // the model sampled "cd" as one token
    const prompt = ids(`${history}abcde. user: more`); // the harness re-sent the text: "c", "d"
    const d = diagnose(context, prompt, H + 2, at(H), detokenize);
    expect(d.kind).toBe('retokenization');
    expect(d.contextText).toContain('abcde');
  });

  it('calls a removed reasoning span followed by the same answer a template change', () => {
    const context = ids(`${history}<think>let me see</think>The answer is 4.<end>`);
    const prompt = ids(`${history}The answer is 4.<end> user: thanks`);
    expect(diagnose(context, prompt, H, at(H), detokenize).kind).toBe('template');
    // Without a tokenizer the ids show the same thing.
    expect(diagnose(context, prompt, H, at(H)).kind).toBe('template');
    // The same removal inside earlier history (before the last answer) is a compaction.
    expect(diagnose(context, prompt, H, at(H + 30), detokenize).kind).toBe('compaction');
  });

  it('calls an answer whose end the template writes its own way a template change', () => {
    // The model stopped on "<eos>" (token 1); the template closes the turn with "<end>" when the harness re-sends it.
    const spell = (t: number): string => (t === 1 ? '<eos>' : t === 1000 ? 'cd' : String.fromCharCode(t));
    const text = (tokens: readonly number[]): string => tokens.map(spell).join('');
    const stopped = [...ids(`${history}The answer is 4.`), 1];
    const closed = ids(`${history}The answer is 4.<end> user: thanks`);
    for (const d of [
      diagnose(stopped, closed, stopped.length - 1, at(H), text),
      diagnose(stopped, closed, stopped.length - 1, at(H)),
    ]) {
      expect(d.kind).toBe('template');
      expect(d.reason).toMatch(/its own end-of-turn token/);
    }
    // Trailing whitespace trimmed before the turn is closed.
    const spaced = ids(`${history}The answer is 4. \n`);
    expect(diagnose(spaced, closed, spaced.length - 2, at(H), text).kind).toBe('template');
    // Leading whitespace trimmed as well: the answer reappears.
    const both = [...ids(`${history} The answer is 4.`), 1];
    expect(diagnose(both, closed, H, at(H), text).kind).toBe('template');
    expect(diagnose(both, closed, H, at(H)).kind).toBe('template');
    // The same ending inside earlier history is not the template's doing.
    expect(diagnose(stopped, closed, stopped.length - 1, at(stopped.length), text).kind).not.toBe('template');
  });

  it('calls a shorter prompt a compaction, a prompt sharing nothing a new context, and the rest other', () => {
    const context = ids(`${history} and then a very long tool output that goes on and on`);
    expect(diagnose(context, ids(`${history} [summary]`), H, at(H), detokenize).kind).toBe('compaction');
    expect(diagnose(context, ids('You are a sub-agent. Find the file.'), 0, at(H), detokenize).kind).toBe(
      'new-context',
    );
    // A sub-agent sharing a long system prompt still parts within the row's first prompt.
    expect(diagnose(context, ids('system: be brief. user: find the file'), 24, at(H), detokenize).kind).toBe(
      'new-context',
    );
    expect(
      diagnose(
        context,
        ids(`${history} and now something entirely different, longer than before, that never returns`),
        H + 10,
        at(H),
        detokenize,
      ).kind,
    ).toBe('other');
  });

  it('calls tool arguments the harness re-dumped an arguments break, when the tokenizer shows the text', () => {
    const answer = '<tool_call>{"name":"read","arguments":{"path":"a.txt","lines":[1,2]}}</tool_call>';
    const context = ids(`${history}${answer}`);
    const prompt = ids(
      `${history}<tool_call>{"name": "read", "arguments": {"path": "a.txt", "lines": [1, 2]}}</tool_call> tool: alpha`,
    );
    const position = context.findIndex((t, i) => t !== prompt[i]);
    const d = diagnose(context, prompt, position, at(H), detokenize);
    expect(d.kind).toBe('arguments');
    expect(d.reason).toMatch(/parsed and re-dumped them/);
    // Other values in the same place are a rewrite, not a re-serialisation.
    const other = ids(`${history}<tool_call>{"name": "read", "arguments": {"path": "b.txt"}}</tool_call>`);
    expect(diagnose(context, other, position, at(H), detokenize).kind).not.toBe('arguments');
  });

  it('calls the same conversation laid out anew a re-laid history, and a fresh one still a new context', () => {
    const turns = ' user: fix the bug in parse. assistant: I changed parse to skip blank lines. user: thanks';
    const context = ids(`${history}${turns}`);
    // aider: its finished turns first, then the repo map, then the request (the prompt parts within the first prompt).
    const relaid = ids(`system: be brief.${turns} repo map: parse.py, main.py user: what is ab`);
    const position = context.findIndex((t, i) => t !== relaid[i]);
    expect(position).toBeLessThan(H);
    const d = diagnose(context, relaid, position, at(H + 20), detokenize);
    expect(d.kind).toBe('re-laid');
    expect(d.reason).toMatch(/% of the row reappears in the prompt/);
    const commit = ids('system: write a commit message for: parse.py skips blank lines');
    expect(diagnose(context, commit, 0, at(H + 20), detokenize).kind).toBe('new-context');
  });

  it('calls a request sent again a retry, and keeps both answers as rows', () => {
    const prompt = ids(history);
    const merged = mergeCalls(
      [
        { seq: 0, status: 'ok', promptIds: prompt, completionIds: ids('first'), completionLogprobs: null },
        // the SDK retried
        { seq: 1, status: 'ok', promptIds: prompt, completionIds: ids('second'), completionLogprobs: null },
      ],
      'trajectory',
      (c, p, at, answers) => diagnose(c, p, at, answers, detokenize),
    );
    expect(merged.rows).toHaveLength(2);
    expect(merged.breaks.map((b) => b.diagnosis?.kind)).toEqual(['retry']);
  });

  it('is attached to breaks when merging is given a tokenizer', () => {
    const merged = mergeCalls(
      [
        {
          seq: 0,
          status: 'ok',
          promptIds: ids(history),
          completionIds: [...ids('ab'), 1000, ...ids('e')],
          completionLogprobs: null,
        },
        {
          seq: 1,
          status: 'ok',
          promptIds: ids(`${history}abcde. user: more`),
          completionIds: ids('ok'),
          completionLogprobs: null,
        },
      ],
      'trajectory',
      (c, p, at, answers) => diagnose(c, p, at, answers, detokenize),
    );
    expect(merged.breaks.map((b) => b.diagnosis?.kind)).toEqual(['retokenization']);
  });
});
