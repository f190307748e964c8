import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RolloutTrace } from '../../src/traces/export.js';
import { alight } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { harnessBin, harnesses } from '../helpers/harnesses.js';
import { type Reply, type ScriptedUpstream, startScriptedUpstream } from '../helpers/scripted-upstream.js';

type Obj = Record<string, unknown>;

/**
 * The model of a one-tool task: with the harness's shell tool it runs `cat note.txt`, then answers with what the
 * tool returned. Claude Code names its shell tool Bash, Codex exec_command.
 */
function shellThenAnswer(_i: number, body: Obj): string | Reply {
  const messages = body.messages as Obj[];
  const last = messages[messages.length - 1];
  if (last.role === 'tool') return `The note says: ${String(last.content).trim().split('\n').at(-1)}`;
  const names = ((body.tools as Obj[] | undefined) ?? []).map((t) => (t.function as Obj).name);
  if (names.includes('Bash'))
    return { toolCalls: [{ name: 'Bash', arguments: '{"command": "cat note.txt", "description": "Show note.txt"}' }] };
  if (names.includes('exec_command'))
    return { toolCalls: [{ name: 'exec_command', arguments: '{"cmd": "cat note.txt"}' }] };
  return 'ok';
}

let upstream: ScriptedUpstream;
beforeAll(async () => {
  upstream = await startScriptedUpstream({ reply: shellThenAnswer });
});
afterAll(async () => upstream.close());

/** A fresh home and a work folder holding note.txt, so nothing of this machine's own settings reaches the harness. */
function workspace(): { dir: string; home: string; work: string; db: string } {
  const dir = tempDir();
  const home = join(dir, 'home');
  const work = join(dir, 'work');
  mkdirSync(join(home, '.codex'), { recursive: true });
  mkdirSync(work);
  writeFileSync(join(work, 'note.txt'), 'hello from alight\n');
  return { dir, home, work, db: join(dir, 'alight.db') };
}

/** Runs the harness under `alight record` and checks what every rollout of a one-tool task must show. */
async function recordOne(
  run: string,
  protocol: string,
  harness: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ trace: RolloutTrace; db: string }> {
  const ws = workspace();
  const from = upstream.log.length;
  const res = await alight(
    ['record', '--upstream', upstream.url, '--db', ws.db, '--run', run, '--json', '--', ...harness],
    { cwd: ws.work, env: { HOME: ws.home, CODEX_HOME: join(ws.home, '.codex'), ...env }, timeoutMs: 150_000 },
  );
  expect(res.code, res.stderr).toBe(0);
  expect(JSON.parse(res.stdout)).toMatchObject({ rollouts: 1, succeeded: 1, error_calls: 0 });
  const exported = await alight(['traces', 'export', '--run', run, '--db', ws.db]);
  const trace = JSON.parse(exported.stdout.trim()) as RolloutTrace;
  expect(trace.calls.length).toBe(2);
  for (const [i, call] of trace.calls.entries()) {
    const produced = upstream.log[from + i];
    expect(call).toMatchObject({ protocol, status: 'ok' });
    expect(call.prompt_token_ids).toEqual(produced.promptIds);
    expect(call.completion_token_ids).toEqual(produced.completionIds);
    expect(call.completion_logprobs).toEqual(produced.logprobs);
  }
  // The harness really ran the command: its output came back as the tool result of the second call.
  const chat = trace.calls[1].request.messages as Obj[];
  expect(chat.at(-1)).toMatchObject({ role: 'tool', content: expect.stringContaining('hello from alight') });
  expect(trace.calls[1].harness?.response).toBeTruthy();
  expect(JSON.stringify(trace)).not.toContain('alt_');
  return { trace, db: ws.db };
}

/** The two calls make one training row: the second prompt extends the first prompt + completion. */
async function expectOneRow(run: string, db: string): Promise<void> {
  const built = await alight([
    'samples',
    'build',
    '--run',
    run,
    '--db',
    db,
    '--out',
    join(db, '..', 'batch.safetensors'),
    '--json',
  ]);
  expect(built.code, built.stderr).toBe(0);
  expect(JSON.parse(built.stdout)).toMatchObject({ metrics: { rows: 1 }, merge: { breaks: 0 } });
}

describe('Claude Code and Codex, unmodified, under alight record', () => {
  it(`runs Claude Code ${harnesses.claude.version} through ` +
    'Anthropic Messages: a shell tool call, then an answer', async () => {
    const { trace, db } = await recordOne(
      'claude',
      'anthropic.messages',
      [harnessBin('claude'), '-p', 'What does note.txt say?', '--allowedTools', 'Bash', '--max-turns', '4'],
      { DISABLE_TELEMETRY: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' },
    );
    expect(trace.calls[0].harness?.request).toMatchObject({
      model: expect.any(String),
      tools: expect.arrayContaining([expect.objectContaining({ name: 'Bash' })]),
    });
    expect(trace.calls[0].harness?.response).toMatchObject({
      type: 'message',
      stop_reason: 'tool_use',
      content: [{ type: 'tool_use', name: 'Bash', input: { command: 'cat note.txt' } }],
    });
    expect(trace.calls[1].harness?.response).toMatchObject({
      stop_reason: 'end_turn',
      content: [{ type: 'text', text: 'The note says: hello from alight' }],
    });
    const shown = await alight(['traces', 'show', trace.rollout_id, '--db', db, '--call', '1']);
    expect(shown.stdout).toMatch(
      /the harness's request \(anthropic\.messages\)[\s\S]*the answer it got[\s\S]*"The note says: hello from alight"[\s\S]*translated: the chat\/completions request sent upstream[\s\S]*"role": "tool"/,
    );
    await expectOneRow('claude', db);
  }, 180_000);

  it(`runs Codex ${harnesses.codex.version} through Responses: its shell tool, then an answer`, async () => {
    // Codex reads its provider from config, not OPENAI_BASE_URL: the README's -c flags point it at the rollout's URL.
    const codex =
      `exec ${harnessBin('codex')} exec --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox -m qwen ` +
      '-c model_provider=alight -c model_providers.alight.name=alight ' +
      '-c model_providers.alight.base_url="$OPENAI_BASE_URL" ' +
      '-c model_providers.alight.env_key=OPENAI_API_KEY ' +
      '-c model_providers.alight.wire_api=responses "What does note.txt say?"';
    const { trace, db } = await recordOne('codex', 'openai.responses', ['sh', '-c', codex], {});
    expect(trace.calls[0].harness?.response).toMatchObject({
      object: 'response',
      output: [{ type: 'function_call', name: 'exec_command', arguments: '{"cmd": "cat note.txt"}' }],
    });
    expect(trace.calls[1].harness?.response).toMatchObject({
      status: 'completed',
      output: [{ type: 'message', content: [{ text: 'The note says: hello from alight' }] }],
    });
    // Codex's web search and sub-agent namespace cannot run upstream: left out, and said so.
    const shown = await alight(['traces', 'show', trace.rollout_id, '--db', db]);
    expect(shown.stdout).toMatch(
      /left out when translating for the upstream \(it cannot run them\): tools .*web_search/,
    );
    await expectOneRow('codex', db);
  }, 180_000);
});
