import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { promptLogprobs } from '../../src/distill/score.js';
import { type Gateway, startGateway } from '../../src/gateway/server.js';
import { envPython } from '../../src/setup/python-env.js';
import { Store } from '../../src/store/store.js';
import { type CallTrace, rolloutTrace } from '../../src/traces/export.js';
import { alight, FIXTURES } from '../helpers/cli.js';
import { ADMIN_KEY, tempDir } from '../helpers/gateway.js';
import { tinyModel } from '../helpers/tiny-model.js';
import { type RealVllm, startRealVllm } from '../helpers/vllm.js';

// The gateway against the real vLLM (0.32.0's CPU build) on a tiny model made here: what it records must be what
// vLLM produced, and what the harness gets must be what it asked for.
type Obj = Record<string, unknown>;
let model: string;
let vllm: RealVllm;
let store: Store;
let gateway: Gateway;
let bare: Gateway;

beforeAll(async () => {
  model = tinyModel(3);
  // float32 as the model was made (vLLM's auto would serve it in bfloat16 on CPU): the recomputed logprobs then compare
  // tightly.
  vllm = await startRealVllm(model, ['--dtype', 'float32']);
  store = Store.open(join(tempDir(), 'alight.db'));
  const start = (kind: 'vllm' | 'openai-compatible') => {
    const config = configSchema.parse({ upstream: { url: vllm.url, kind, retries: 0 } });
    return startGateway({
      store,
      gateway: config.gateway,
      upstream: config.upstream,
      adminKey: ADMIN_KEY,
      upstreamApiKey: vllm.apiKey,
    });
  };
  gateway = await start('vllm');
  // A vLLM upstream's model name is pinned; through a pass-through gateway the harness's name reaches vLLM (its 404).
  bare = await start('openai-compatible');
}, 600_000);
afterAll(async () => {
  await gateway?.close();
  await bare?.close();
  store?.close();
  await vllm?.stop();
}, 60_000);

function harness(g = gateway): { openai: OpenAI; rolloutId: string; base: string; token: string } {
  const { rollout, token } = g.rollouts.create({ run: 'vllm' });
  const base = `${g.url}/r/${token}/v1`;
  return { openai: new OpenAI({ baseURL: base, apiKey: token, maxRetries: 0 }), rolloutId: rollout.id, base, token };
}

/** The same request straight to vLLM, asking for what the gateway asks for: the ground truth of a recorded call. */
async function direct(path: string, body: Obj): Promise<Obj> {
  const res = await fetch(`${vllm.url}/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${vllm.apiKey}` },
    body: JSON.stringify({
      model: vllm.model,
      return_token_ids: true,
      logprobs: path === 'completions' ? 0 : true,
      ...body,
    }),
  });
  return (await res.json()) as Obj;
}

function calls(rolloutId: string): CallTrace[] {
  return rolloutTrace(store, rolloutId).calls;
}

/**
 * transformers' logprobs of a completion (test/helpers/recompute_logprobs.py), in a child process that does not block
 * the event loop: a blocked loop misses vLLM closing idle kept-alive sockets, and the next request takes a dead one.
 */
function recompute(input: Obj): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(envPython(), [join(FIXTURES, '..', 'helpers', 'recompute_logprobs.py')]);
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(JSON.parse(out) as number[]) : reject(new Error(`exit ${code}`)),
    );
    child.stdin.end(JSON.stringify(input));
  });
}

/** Equal within `abs` + `rel`·|expected| (vLLM's CPU kernels and transformers' differ by ~1e-4 relative). */
function expectClose(actual: number[] | null, expected: number[], abs = 1e-5, rel = 0): void {
  expect(actual).toHaveLength(expected.length);
  for (const [i, x] of actual!.entries()) {
    expect(Math.abs(x - expected[i]), `token ${i}: ${x} vs ${expected[i]}`).toBeLessThanOrEqual(
      abs + rel * Math.abs(expected[i]),
    );
  }
}

const messages: OpenAI.ChatCompletionMessageParam[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Say yes.' },
];

describe('the gateway against the real vLLM', () => {
  it('records chat calls, whole and streamed, exactly as vLLM produced them', async () => {
    const { openai, rolloutId } = harness();
    const whole = await openai.chat.completions.create({
      model: 'any',
      messages,
      max_tokens: 12,
      seed: 7,
      temperature: 1,
    });
    const stream = await openai.chat.completions.create({
      model: 'any',
      messages,
      max_tokens: 12,
      seed: 7,
      temperature: 1,
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    const truth = await direct('chat/completions', { messages, max_tokens: 12, seed: 7, temperature: 1 });
    const choice = (truth.choices as Obj[])[0];
    const [a, b] = calls(rolloutId);
    for (const call of [a, b]) {
      expect(call.status).toBe('ok');
      expect(call.prompt_token_ids).toEqual(truth.prompt_token_ids);
      expect(call.completion_token_ids).toEqual(choice.token_ids);
      expectClose(
        call.completion_logprobs,
        ((choice.logprobs as Obj).content as { logprob: number }[]).map((c) => c.logprob),
      );
    }
    expect(whole.choices[0].message.content).toBe((choice.message as Obj).content);
    expect(text).toBe((choice.message as Obj).content);
    expect(b.stream).toBe(true);
  });

  it('records completions with text and token-id prompts, whole and streamed', async () => {
    const { openai, rolloutId } = harness();
    const ids = [4, 5, 6, 7];
    await openai.completions.create({ model: 'any', prompt: 'abc', max_tokens: 6, seed: 1 });
    const stream = await openai.completions.create({ model: 'any', prompt: ids, max_tokens: 6, seed: 1, stream: true });
    for await (const _ of stream) {
      /* drain */
    }
    const [text, tokens] = calls(rolloutId);
    const truthText = ((await direct('completions', { prompt: 'abc', max_tokens: 6, seed: 1 })).choices as Obj[])[0];
    const truthIds = ((await direct('completions', { prompt: ids, max_tokens: 6, seed: 1 })).choices as Obj[])[0];
    expect(text.prompt_token_ids).toEqual(truthText.prompt_token_ids);
    expect(text.completion_token_ids).toEqual(truthText.token_ids);
    expect(tokens.prompt_token_ids).toEqual(ids);
    expect(tokens.completion_token_ids).toEqual(truthIds.token_ids);
    expectClose(tokens.completion_logprobs, (truthIds.logprobs as { token_logprobs: number[] }).token_logprobs);
  });

  it("gives a harness that asks for echo the prompt back, and records only the sampled tokens' logprobs", async () => {
    const { openai, rolloutId } = harness();
    const prompt = 'The cat';
    const whole = await openai.completions.create({
      model: 'any',
      prompt,
      max_tokens: 5,
      seed: 2,
      echo: true,
      logprobs: 0,
    });
    const stream = await openai.completions.create({
      model: 'any',
      prompt,
      max_tokens: 5,
      seed: 2,
      echo: true,
      stream: true,
    });
    let streamed = '';
    for await (const chunk of stream) streamed += chunk.choices[0]?.text ?? '';
    const truth = ((await direct('completions', { prompt, max_tokens: 5, seed: 2 })).choices as Obj[])[0];
    expect(whole.choices[0].text).toBe(prompt + truth.text);
    expect(streamed).toBe(prompt + truth.text);
    // vLLM's echoed logprobs cover the prompt too (the first one null); the harness asked for those.
    expect(whole.choices[0].logprobs!.token_logprobs![0]).toBeNull();
    for (const call of calls(rolloutId)) {
      expect(call.completion_token_ids).toEqual(truth.token_ids);
      expectClose(call.completion_logprobs, (truth.logprobs as { token_logprobs: number[] }).token_logprobs);
    }
    // A token-id prompt's text cannot be rebuilt exactly: refused before anything is sent.
    const refused = await openai.completions
      .create({ model: 'any', prompt: [4, 5], max_tokens: 2, echo: true })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as Error).message).toMatch(/echo/);
  });

  it("passes tool calls through vLLM's hermes parser, whole and streamed", async () => {
    const { openai, rolloutId } = harness();
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: 'function',
        function: { name: 'add', parameters: { type: 'object', properties: { a: { type: 'integer' } } } },
      },
    ];
    // A grammar makes the random tiny model write the hermes format the parser reads.
    const call = '<tool_call>{"name": "add", "arguments": {"a": 12}}</tool_call>';
    const extra = { structured_outputs: { regex: call.replace(/[{}[\]]/g, '\\$&') } } as object;
    const whole = await openai.chat.completions.create({ model: 'any', messages, tools, max_tokens: 100, ...extra });
    expect(whole.choices[0].message.tool_calls?.[0]).toMatchObject({
      type: 'function',
      function: { name: 'add', arguments: '{"a": 12}' },
    });
    expect(whole.choices[0].finish_reason).toBe('tool_calls');
    const stream = await openai.chat.completions.create({
      model: 'any',
      messages,
      tools,
      max_tokens: 100,
      stream: true,
      ...extra,
    });
    let args = '';
    let name = '';
    for await (const chunk of stream) {
      const t = chunk.choices[0]?.delta?.tool_calls?.[0];
      name += t?.function?.name ?? '';
      args += t?.function?.arguments ?? '';
    }
    expect([name, JSON.parse(args)]).toEqual(['add', { a: 12 }]);
    const recorded = calls(rolloutId);
    for (const c of recorded) {
      expect(c.status).toBe('ok');
      // The ids spell the hermes text the parser read, one character a token.
      expect(c.completion_token_ids!.length).toBeGreaterThanOrEqual(call.length);
    }
    expect((recorded[0].response as { choices: { message: Obj }[] }).choices[0].message.tool_calls).toBeDefined();
  });

  it('relays n answers and records the first; a seed gives the same tokens again', async () => {
    const { openai, rolloutId } = harness();
    const many = await openai.chat.completions.create({ model: 'any', messages, max_tokens: 8, n: 2, seed: 5 });
    expect(many.choices).toHaveLength(2);
    await openai.chat.completions.create({ model: 'any', messages, max_tokens: 8, seed: 11 });
    await openai.chat.completions.create({ model: 'any', messages, max_tokens: 8, seed: 11 });
    const [first, again, same] = calls(rolloutId);
    const truth = (await direct('chat/completions', { messages, max_tokens: 8, n: 2, seed: 5 })).choices as Obj[];
    expect(first.completion_token_ids).toEqual(truth[0].token_ids);
    expect(again.completion_token_ids).toEqual(same.completion_token_ids);
  });

  it("relays vLLM's errors in its own shape and records them", async () => {
    const { openai, rolloutId } = harness();
    const bad = await openai.chat.completions
      .create({ model: 'any', messages, max_tokens: -1 })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    const long = await openai.chat.completions
      .create({ model: 'any', messages: [{ role: 'user', content: 'a '.repeat(2000) }] })
      .catch((e: unknown) => e);
    expect(long).toBeInstanceOf(OpenAI.BadRequestError);
    expect((long as Error).message).toMatch(/context|maximum|length/i);
    const other = harness(bare);
    const unknown = await other.openai.chat.completions
      .create({ model: 'no-such-model', messages })
      .catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    const recorded = [...calls(rolloutId), ...calls(other.rolloutId)];
    expect(recorded.map((c) => [c.status, c.http_status])).toEqual([
      ['error', 400],
      ['error', 400],
      ['error', 404],
    ]);
  });

  it('reports logprobs of the distribution each token was sampled from (temperature 0.3, top-k)', async () => {
    const { openai, rolloutId } = harness();
    await openai.chat.completions.create({ model: 'any', messages, max_tokens: 16, temperature: 0.3, seed: 3 });
    await openai.chat.completions.create({
      model: 'any',
      messages,
      max_tokens: 16,
      temperature: 1,
      seed: 3,
      top_k: 5,
    } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    const [cool, topk] = calls(rolloutId);
    for (const [call, temperature, topK] of [
      [cool, 0.3, null],
      [topk, 1, 5],
    ] as const) {
      const recomputed = await recompute({
        model,
        prompt: call.prompt_token_ids,
        completion: call.completion_token_ids,
        temperature,
        top_k: topK,
      });
      expectClose(call.completion_logprobs, recomputed, 1e-3, 1e-3);
    }
  });

  it("answers a distillation teacher's scoring request: every token of a token-id row, as transformers scores it", async () => {
    const truth = ((await direct('completions', { prompt: 'The cat', max_tokens: 8, seed: 1 })).choices as Obj[])[0];
    const row = [...(truth.prompt_token_ids as number[]), ...(truth.token_ids as number[])];
    const scored = await promptLogprobs({ url: vllm.url, model: vllm.model, apiKey: vllm.apiKey }, row, 60_000);
    expect(scored.ids).toEqual(row);
    expect(scored.logprobs[0]).toBeNull();
    const recomputed = await recompute({ model, prompt: row.slice(0, 1), completion: row.slice(1), temperature: 1 });
    expectClose(scored.logprobs.slice(1) as number[], recomputed, 1e-3, 1e-3);
  });

  it('alight doctor --upstream finds token ids and processed logprobs', async () => {
    const res = await alight(['doctor', '--upstream', vllm.url, '--upstream-key-env', 'VLLM_KEY', '--json'], {
      env: { VLLM_KEY: vllm.apiKey },
    });
    expect(res.code, res.stderr).toBe(0);
    const checks = JSON.parse(res.stdout).checks as { name: string; ok: boolean }[];
    expect(checks.map((c) => [c.name, c.ok])).toEqual([
      ['vLLM version', true],
      ['models', true],
      ['token ids', true],
      ['logprobs mode', true],
    ]);
  });
});

describe('Anthropic Messages and Responses translated for the real vLLM', () => {
  // Greedy, so that the ground truth straight from vLLM is the same answer.
  const truth = (extra: Obj = {}) => direct('chat/completions', { messages, max_tokens: 12, temperature: 0, ...extra });

  it(
    'records whole and streamed answers exactly as vLLM ' + 'produced them, and gives each harness its own protocol',
    async () => {
      const { rolloutId, token } = harness();
      const anthropic = new Anthropic({ baseURL: `${gateway.url}/r/${token}`, apiKey: token, maxRetries: 0 });
      const openai = new OpenAI({ baseURL: `${gateway.url}/r/${token}/v1`, apiKey: token, maxRetries: 0 });
      const ask = {
        model: 'claude-x',
        max_tokens: 12,
        temperature: 0,
        system: 'You are terse.',
        messages: [{ role: 'user' as const, content: 'Say yes.' }],
      };
      const whole = await anthropic.messages.create(ask);
      const streamed = await anthropic.messages.stream(ask).finalMessage();
      const respond = {
        model: 'gpt-x',
        instructions: 'You are terse.',
        input: 'Say yes.',
        max_output_tokens: 12,
        temperature: 0,
      };
      const response = await openai.responses.create(respond);
      const responseStreamed = await openai.responses.stream(respond).finalResponse();

      const t = await truth();
      const choice = (t.choices as Obj[])[0];
      const text = (choice.message as Obj).content as string;
      for (const m of [whole, streamed]) {
        expect(m).toMatchObject({
          model: 'claude-x',
          content: [{ type: 'text', text }],
          usage: { input_tokens: (t.prompt_token_ids as number[]).length },
        });
      }
      expect([response.output_text, responseStreamed.output_text]).toEqual([text, text]);
      const recorded = calls(rolloutId);
      expect(recorded.map((c) => c.protocol)).toEqual([
        'anthropic.messages',
        'anthropic.messages',
        'openai.responses',
        'openai.responses',
      ]);
      for (const call of recorded) {
        expect(call.status).toBe('ok');
        expect(call.prompt_token_ids).toEqual(t.prompt_token_ids);
        expect(call.completion_token_ids).toEqual(choice.token_ids);
        expectClose(
          call.completion_logprobs,
          ((choice.logprobs as Obj).content as { logprob: number }[]).map((c) => c.logprob),
        );
      }
    },
  );

  // vLLM forces a named tool with its parser's own format (hermes here): the random tiny model then writes arguments
  // that are no JSON object, which is what a weak policy does too. The harness must still get a tool call it can parse.
  it('streams a tool call the harness named, as tool_use and function_call, recorded exactly', async () => {
    const { rolloutId, token } = harness();
    const anthropic = new Anthropic({ baseURL: `${gateway.url}/r/${token}`, apiKey: token, maxRetries: 0 });
    const openai = new OpenAI({ baseURL: `${gateway.url}/r/${token}/v1`, apiKey: token, maxRetries: 0 });
    const schema = { type: 'object' as const, properties: { op: { type: 'string' } } };
    const message = await anthropic.messages
      .stream({
        model: 'claude-x',
        max_tokens: 60,
        temperature: 0,
        system: 'You are terse.',
        messages: [{ role: 'user', content: 'Say yes.' }],
        tools: [{ name: 'calc', input_schema: schema }],
        tool_choice: { type: 'tool', name: 'calc' },
      })
      .finalMessage();
    expect(message.content).toEqual([
      { type: 'tool_use', id: expect.any(String), name: 'calc', input: expect.any(Object) },
    ]);
    const response = await openai.responses
      .stream({
        model: 'gpt-x',
        max_output_tokens: 60,
        temperature: 0,
        instructions: 'You are terse.',
        input: 'Say yes.',
        tools: [{ type: 'function', name: 'calc', parameters: schema, strict: false }],
        tool_choice: { type: 'function', name: 'calc' },
      })
      .finalResponse();
    expect(response.output).toMatchObject([{ type: 'function_call', name: 'calc' }]);

    const t = await truth({
      max_tokens: 60,
      tools: [{ type: 'function', function: { name: 'calc', parameters: schema } }],
      tool_choice: { type: 'function', function: { name: 'calc' } },
    });
    const choice = (t.choices as Obj[])[0];
    // The harness gets the arguments vLLM streamed, as recorded in the assembled chat answer.
    const recorded = calls(rolloutId)[1].response as {
      choices: { message: { tool_calls: { function: { arguments: string } }[] } }[];
    };
    expect((response.output[0] as OpenAI.Responses.ResponseFunctionToolCall).arguments).toBe(
      recorded.choices[0].message.tool_calls[0].function.arguments,
    );
    for (const call of calls(rolloutId)) {
      expect(call.prompt_token_ids).toEqual(t.prompt_token_ids);
      expect(call.completion_token_ids).toEqual(choice.token_ids);
    }
  });
});

describe('alight record --serve-vllm', () => {
  it('records the openai-SDK harness against a vLLM it ' +
    'starts, and samples build makes rows of the traces', async () => {
    const dir = tempDir();
    const tasks = join(dir, 'tasks.jsonl');
    execFileSync('sh', [
      '-c',
      `printf '%s\\n' '{"id":"a","turns":2,"max_tokens":8}' '{"id":"b","turns":2,"max_tokens":8}' > ${tasks}`,
    ]);
    const db = join(dir, 'alight.db');
    const res = await alight(
      [
        'record',
        '--serve-vllm',
        model,
        '--device',
        'cpu',
        '--tasks',
        tasks,
        '--run',
        'sdk',
        '--db',
        db,
        '--json',
        '--',
        'node',
        join(FIXTURES, 'sdk-harness.mjs'),
      ],
      { timeoutMs: 600_000 },
    );
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ rollouts: 2, succeeded: 2, failed: 0, calls: 4 });
    const s = Store.open(db);
    try {
      const all = s.rolloutSummaries({ run: 'sdk' }).flatMap((r) => rolloutTrace(s, r.id).calls);
      expect(all).toHaveLength(4);
      for (const c of all) {
        expect(c.status).toBe('ok');
        expect(c.completion_token_ids!.length).toBe(c.completion_logprobs!.length);
        expect(c.prompt_token_ids!.length).toBeGreaterThan(0);
      }
    } finally {
      s.close();
    }
    const built = await alight([
      'samples',
      'build',
      '--run',
      'sdk',
      '--db',
      db,
      '--out',
      join(dir, 'batch.safetensors'),
      '--json',
    ]);
    expect(built.code, built.stderr).toBe(0);
    // Two turns that extend each other: one row per rollout (or breaks that the diagnosis explains).
    const result = JSON.parse(built.stdout);
    expect(result.metrics.rows).toBe(2 + result.merge.breaks);
  }, 600_000);
});

describe('alight train --serve-vllm', () => {
  const root = join(FIXTURES, '..', '..');
  /** 2 steps of the vowels example on a tiny model with vLLM's CPU build serving it, in run `v` of `db`. */
  const trainServed = (policy: string, db: string, env: NodeJS.ProcessEnv = {}, extra: string[] = []) =>
    alight(
      [
        'train',
        ...extra,
        '--model',
        policy,
        '--serve-vllm',
        '--device',
        'cpu',
        '--tasks',
        join(root, 'examples/vowels/tasks.jsonl'),
        '-n',
        '4',
        '--batch-size',
        '2',
        '--steps',
        '2',
        '--lr',
        '0.05',
        '--seed',
        '0',
        '--run',
        'v',
        '--db',
        db,
        '--json',
        '--',
        'node',
        join(root, 'examples/vowels/harness.mjs'),
      ],
      { timeoutMs: 900_000, env },
    );

  // A run of 2 steps whose second sync does nothing (fault injection from version 2): the first sync is checked and
  // passes, what vLLM served before and after it is the policy of each version, and the second is caught, stopping the
  // run, saying so. One vLLM start shows both (each start costs a minute on 2 cores).
  const stale = { ALIGHT_FAULT_SKIP_RELOAD: '2' };
  const caught = (res: { code: number | null; stderr: string }): void => {
    expect(res.code, res.stderr).not.toBe(0);
    expect(res.stderr).toMatch(
      /served-policy check after step 1: not synced: after the update to version 2 the engine's log-probs/,
    );
    expect(res.stderr).not.toMatch(/\n\s+at /);
  };

  it('trains on the torch worker while vLLM serves, reloading the weights after an update; a reload that does ' +
    'nothing stops the run at that step, saying so', async () => {
    const dir = tempDir();
    const policy = tinyModel(4);
    const db = join(dir, 'alight.db');
    caught(await trainServed(policy, db, stale));
    const s = Store.open(db);
    const byVersion = new Map<number, CallTrace[]>();
    try {
      for (const r of s.rolloutSummaries({ run: 'v' })) {
        for (const c of rolloutTrace(s, r.id).calls)
          byVersion.set(c.model_version!, [...(byVersion.get(c.model_version!) ?? []), c]);
      }
      // The served-policy check passed after the sync that took: vLLM's probe log-probs are the trainer's, and moved
      // with them.
      const steps = s.trainSteps('v');
      expect(steps).toHaveLength(1);
      const { served_logprob_diff: diff, served_moved_ratio: ratio } = steps[0].metrics;
      expect(diff).toBeLessThan(0.02);
      // (no ratio where the probe chose other tokens than at version 0: nothing to compare)
      if (ratio !== null) expect(ratio).toBeGreaterThan(0.5);
    } finally {
      s.close();
    }
    expect([...byVersion.keys()].sort()).toEqual([0, 1]);
    // What vLLM served at each version is the policy of that version: the initial model, then step 0's update.
    const recompute = (model: string, call: CallTrace): number[] =>
      JSON.parse(
        execFileSync(envPython(), [join(FIXTURES, '..', 'helpers', 'recompute_logprobs.py')], {
          input: JSON.stringify({
            model,
            prompt: call.prompt_token_ids,
            completion: call.completion_token_ids,
            temperature: 1,
          }),
          encoding: 'utf8',
        }),
      );
    const [before, after] = [byVersion.get(0)![0], byVersion.get(1)![0]];
    expectClose(before.completion_logprobs, recompute(policy, before), 1e-3, 1e-3);
    expectClose(
      after.completion_logprobs,
      recompute(join(dir, 'runs', 'v', 'checkpoints', 'step-0'), after),
      1e-3,
      1e-3,
    );
    // …and not the initial model's any more: the reload took.
    const old = recompute(policy, after);
    expect(Math.max(...after.completion_logprobs!.map((x, i) => Math.abs(x - old[i])))).toBeGreaterThan(0.01);
  }, 900_000);

  it('serves a LoRA adapter on the base and hot-swaps it in place after an update, the check passing; an adapter ' +
    'that never reaches vLLM stops the run at that step, saying so', async () => {
    const dir = tempDir();
    const db = join(dir, 'alight.db');
    caught(await trainServed(tinyModel(4), db, stale, ['--lora-rank', '4']));
    const s = Store.open(db);
    try {
      const steps = s.trainSteps('v');
      expect(steps).toHaveLength(1);
      const { served_logprob_diff: diff, served_moved_ratio: ratio } = steps[0].metrics;
      expect(diff).toBeLessThan(0.02);
      if (ratio !== null) expect(ratio).toBeGreaterThan(0.5);
    } finally {
      s.close();
    }
    // One server for the whole run, the adapter loaded at its start and again after the update that took, each time
    // from a folder of its own; the folder it replaced is removed, and the one never loaded (version 2's) is left.
    const log = readFileSync(join(dir, 'runs', 'v', 'vllm.log'), 'utf8');
    expect(log.match(/non-default args/g)).toHaveLength(1);
    expect(log.match(/Loaded new LoRA adapter: name 'alight-policy'/g)).toHaveLength(2);
    expect(log).not.toMatch(/Reloaded LoRA adapter .* in place from the same path/);
    const kept = readdirSync(join(dir, 'runs', 'v', 'serving')).sort();
    expect(kept).toEqual([expect.stringMatching(/^adapter-1-\d+$/), expect.stringMatching(/^adapter-2-\d+$/)]);
    expect(readdirSync(join(dir, 'runs', 'v', 'serving', kept[0]))).toContain('adapter_model.safetensors');
  }, 900_000);
});
