import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeByteTokenizer } from '../helpers/byte-tokenizer.js';
import { alight, FIXTURES } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { type ScriptedOptions, type ScriptedUpstream, startScriptedUpstream } from '../helpers/scripted-upstream.js';

// Merging and its diagnosis on traces recorded through the gateway from the openai-SDK harness: each case is a
// behaviour of a real serving stack (a chat template, a tokenizer, an SDK) reproduced by the scripted upstream.
let upstream: ScriptedUpstream | undefined;
afterEach(async () => upstream?.close());

interface Recorded {
  dir: string;
  db: string;
  tokenizer: string;
}

async function record(
  options: ScriptedOptions,
  task: Record<string, unknown>,
  merged: string[] = [],
): Promise<Recorded> {
  upstream = await startScriptedUpstream({ ...options, merged });
  const dir = tempDir();
  const db = join(dir, 'alight.db');
  const tasks = join(dir, 'tasks.jsonl');
  writeFileSync(tasks, ['a', 'b'].map((id, k) => JSON.stringify({ id, reward: k, turns: 3, ...task })).join('\n'));
  const res = await alight([
    'record',
    '--upstream',
    upstream.url,
    '--db',
    db,
    '--run',
    'r',
    '--tasks',
    tasks,
    '-n',
    '2',
    '--json',
    '--',
    process.execPath,
    join(FIXTURES, 'sdk-harness.mjs'),
  ]);
  expect(res.code, res.stderr).toBe(0);
  return { dir, db, tokenizer: writeByteTokenizer(dir, merged) };
}

async function json(args: string[]) {
  const res = await alight(args);
  expect(res.code, res.stderr).toBe(0);
  return JSON.parse(res.stdout);
}

const build = (r: Recorded) =>
  json(['samples', 'build', '--run', 'r', '--db', r.db, '--out', join(r.dir, 'b.safetensors'), '--json']);
const diagnose = (r: Recorded, tokenizer = true) =>
  json([
    'samples',
    'diagnose',
    '--run',
    'r',
    '--db',
    r.db,
    '--json',
    ...(tokenizer ? ['--tokenizer', r.tokenizer] : []),
  ]);

describe('merging recorded traces', () => {
  it('classifies a chat template that strips earlier thinking as template, with the decoded text', async () => {
    const r = await record({ stripThinking: true, reply: (i) => `<think>plan ${i}</think>answer ${i}` }, {});
    const d = await diagnose(r);
    expect(d.kinds).toMatchObject({ template: 8, retokenization: 0, other: 0, compaction: 0 });
    const shown = d.breaks.find((b: { diagnosis: { kind: string } }) => b.diagnosis.kind === 'template');
    expect(shown.diagnosis.contextText).toContain('<think>plan');
    expect(shown.diagnosis.promptText).not.toContain('<think>');
    // Each stripped turn starts a row: three rows a rollout, none of them lost.
    expect((await build(r)).metrics).toMatchObject({ rollouts: 4, rows: 12 });
  });

  it('classifies a history re-tokenized from text as retokenization when the tokenizer is known', async () => {
    const r = await record({ reply: (i) => `the answer ${i}` }, {}, ['th', 'the']);
    const d = await diagnose(r);
    expect(d.kinds).toMatchObject({ retokenization: 8, template: 0, other: 0 });
    const b = d.breaks.find((x: { diagnosis: { kind: string } }) => x.diagnosis.kind === 'retokenization');
    expect(b.context).toContain(259);
    expect(b.diagnosis.contextText).toContain('the answer');
    const blind = await diagnose(r, false);
    expect(blind.kinds.retokenization).toBe(0);
    expect(
      blind.breaks.find((x: { diagnosis: { kind: string } }) => x.diagnosis.kind === 'other').diagnosis.reason,
    ).toMatch(/pass --tokenizer/);
    // `samples show` decodes each row, and what the policy sampled in it, with the same tokenizer.
    await build(r);
    const shown = await json(['samples', 'show', join(r.dir, 'b.safetensors'), '--tokenizer', r.tokenizer, '--json']);
    expect(shown.rows[0].text).toMatch(/^<\|im_start\|>system\nYou are a test agent\.<\|im_end\|>/);
    expect(shown.rows[0].sampled_text).toMatch(/^the answer \d+<\|im_end\|>$/);
  });

  it('keeps interleaved sub-agent calls in two rows per rollout', async () => {
    const r = await record({}, { subagent: true });
    const result = await build(r);
    expect(result.metrics).toMatchObject({ rollouts: 4, rows: 8 });
    expect((await diagnose(r)).kinds).toMatchObject({
      'new-context': 4,
      template: 0,
      retokenization: 0,
      other: 0,
      compaction: 0,
      retry: 0,
    });
  });

  it(
    'merges an SDK retry of a timed-out request into the ' + 'same row, the abandoned attempt skipped and counted',
    async () => {
      const hung = new Set<string>();
      const script: ScriptedOptions['script'] = (_, body) => {
        const messages = body.messages as { content: string }[];
        const key = messages[1].content;
        if (messages.length !== 4 || hung.has(key)) return 'ok';
        hung.add(key);
        return 'hang';
      };
      const r = await record({ script }, { retries: 1, timeout_ms: 5000 });
      expect(hung.size).toBe(4);
      const result = await build(r);
      expect(result.metrics).toMatchObject({ rollouts: 4, rows: 4 });
      expect(result.merge).toMatchObject({ breaks: 0, skipped_error_calls: 4 });
    },
  );
});
