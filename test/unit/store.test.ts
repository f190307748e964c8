import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runTrainSettings, storedSft, storedTrain } from '../../src/config/run-settings.js';
import { buildBatch } from '../../src/samples/batch.js';
import { mergeCalls } from '../../src/samples/merge.js';
import type { CallRecord } from '../../src/store/calls.js';
import {
  commonPrefix,
  commonTokenPrefix,
  decodeFloat32,
  decodeInt32,
  encodeFloat32,
  encodeInt32,
} from '../../src/store/codec.js';
import { migrations } from '../../src/store/migrations.js';
import { encodeRequest, suffixJson } from '../../src/store/request-json.js';
import { Store } from '../../src/store/store.js';
import { tempDir } from '../helpers/gateway.js';

const call = (seq: number, prompt: number[] | null, completion: number[] | null, messages: unknown[]): CallRecord => ({
  rolloutId: 'ro_1',
  seq,
  protocol: 'openai.chat',
  stream: false,
  request: encodeRequest({ model: 'm', messages }),
  response: { ok: seq },
  promptIds: prompt,
  completionIds: completion,
  completionLogprobs: completion?.map((t) => -t / 8) ?? null,
  promptTokens: prompt?.length ?? null,
  completionTokens: completion?.length ?? null,
  status: 'ok',
  httpStatus: 200,
  error: null,
  latencyMs: 1,
  modelVersion: 0,
  finishReason: 'stop',
});

describe('codec', () => {
  it('round-trips int32 and float32 BLOBs little-endian', () => {
    const ids = [0, 1, 151_643, 2 ** 31 - 1, -5];
    expect(Array.from(decodeInt32(encodeInt32(ids)))).toEqual(ids);
    expect([...encodeInt32([1])]).toEqual([1, 0, 0, 0]);
    const lps = [-0.5, -0.25, 0];
    expect(Array.from(decodeFloat32(encodeFloat32(lps)))).toEqual(lps);
    // Unaligned buffers (as SQLite may hand back) decode too.
    const unaligned = Buffer.concat([Buffer.from([9]), encodeInt32([7, 8])]).subarray(1);
    expect(Array.from(decodeInt32(unaligned))).toEqual([7, 8]);
    expect(commonPrefix([1, 2, 3], [1, 2, 4, 5])).toBe(2);
  });
});

describe('store', () => {
  it('migrates a new file to the latest schema and refuses a newer one', () => {
    const path = join(tempDir(), 'a.db');
    const store = Store.open(path);
    expect(store.db.pragma('user_version', { simple: true })).toBe(migrations.length);
    expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
    store.db.pragma(`user_version = ${migrations.length + 1}`);
    store.close();
    expect(() => Store.open(path)).toThrow(/newer alight/);
  });

  it("reads a run's stored settings through the config schema: its defaults for what was not stored", () => {
    const store = Store.open(join(tempDir(), 's.db'));
    store.ensureRun('new', 'train', { train: { model: '/m', optimiser: { lr: 2e-6 }, gone: 1 } });
    const grouped = { model: '/m', optimiser: { lr: 2e-6, clipHigh: 0.28 }, batch: { level: 'trajectory' } };
    expect(runTrainSettings(store, 'new')).toMatchObject(grouped);
    expect(runTrainSettings(store, 'new')).not.toHaveProperty('gone');
    // A run stored before train's keys were grouped reads the same, each flat key in its group.
    store.ensureRun('old', 'train', { train: { model: '/m', lr: 2e-6, verl: ['a=1'], gpus: 2 } });
    expect(runTrainSettings(store, 'old')).toMatchObject({ ...grouped, verl: { gpus: 2, overrides: ['a=1'] } });
    store.ensureRun('recorded', 'record', undefined);
    expect(storedTrain(store, 'recorded')).toBeUndefined();
    expect(runTrainSettings(store, 'recorded').batch.purposes).toEqual(['main']);
    store.ensureRun('sft', 'sft', { sft: { data: '/d', epochs: 2, backend: 'verl' } });
    expect(storedSft(store, 'sft')).toEqual({ data: '/d', epochs: 2 });
    store.ensureRun('bad', 'train', { train: { lr: 'fast' } });
    expect(() => storedTrain(store, 'bad')).toThrow(
      /run bad's stored train settings do not read:\n {2}optimiser\.lr: /,
    );
    store.close();
  });

  it('stores growing prompts as references and rebuilds them exactly, across parallel chains', () => {
    const store = Store.open(join(tempDir(), 'b.db'));
    const m1 = [{ role: 'user', content: 'a' }];
    const m2 = [...m1, { role: 'assistant', content: 'b' }, { role: 'user', content: 'c' }];
    const sub = [{ role: 'user', content: 'sub-agent' }];
    const calls = [
      call(0, [1, 2, 3], [4, 5], m1),
      call(1, [1, 2, 3, 4, 5, 6, 7], [8], m2), // extends call 0
      call(2, [90, 91], [92], sub), // a sub-agent: a new chain
      call(3, [1, 2, 3, 4, 5, 6, 7, 8, 9], [10], [...m2, { role: 'assistant', content: 'd' }]), // extends call 1
      call(4, [90, 91, 92, 93], [94], [...sub, { role: 'user', content: 'more' }]), // extends call 2
      call(5, [1, 2, 3, 4, 99], [100], m1), // a rewritten history: shares only a prefix
      call(6, null, null, m1), // an upstream without token ids
    ];
    for (const c of calls) store.calls.add(c);
    const rows = store.db
      .prepare(
        'SELECT seq, prompt_ref, prompt_prefix, length(prompt_suffix) AS suffix, msg_prefix FROM calls ORDER BY seq',
      )
      .all();
    expect(rows).toMatchObject([
      { seq: 0, prompt_ref: null, suffix: 12 },
      { seq: 1, prompt_prefix: 5, suffix: 8 },
      { seq: 2, prompt_ref: null, suffix: 8 },
      { seq: 3, prompt_prefix: 8, suffix: 4, msg_prefix: 3 },
      { seq: 4, prompt_prefix: 3, suffix: 4, msg_prefix: 1 },
      { seq: 5, prompt_prefix: 4, suffix: 4 },
      { seq: 6, suffix: null },
    ]);
    const listed = store.calls.list('ro_1');
    listed.forEach((c, i) => {
      expect(c.promptIds).toEqual(calls[i].promptIds);
      expect(c.completionIds).toEqual(calls[i].completionIds);
      expect(c.completionLogprobs).toEqual(calls[i].completionLogprobs);
      expect(c.request).toEqual(calls[i].request.body);
    });
    // A new process (no in-memory window) rebuilds the same calls.
    store.close();
  });

  it('stores string prompts of the completions API by reference too', () => {
    const store = Store.open(':memory:');
    const base = { ...call(0, [1], [2], []), protocol: 'openai.completions' };
    store.calls.add({ ...base, request: encodeRequest({ prompt: 'hello world' }) });
    store.calls.add({ ...base, seq: 1, request: encodeRequest({ prompt: 'hello world, and more' }) });
    const row = store.db.prepare('SELECT request, msg_prefix FROM calls WHERE seq = 1').get() as {
      request: string;
      msg_prefix: number;
    };
    expect(row.msg_prefix).toBe(11);
    expect(JSON.parse(row.request).prompt).toBe(', and more');
    expect(store.calls.list('ro_1').map((c) => c.request.prompt)).toEqual(['hello world', 'hello world, and more']);
  });
});

describe('request encoding', () => {
  it('serialises each message once and builds the same JSON, whole or as a suffix', () => {
    for (const body of [
      { messages: [] },
      {
        model: 'm',
        stream: true,
        messages: [
          { role: 'user', content: 'é "q"' },
          { role: 'assistant', content: null },
        ],
      },
    ]) {
      const enc = encodeRequest(body);
      expect(JSON.parse(enc.payload.toString())).toEqual(body);
      expect(JSON.parse(suffixJson(enc, 1))).toEqual({ ...body, messages: body.messages.slice(1) });
    }
    const completions = encodeRequest({ prompt: 'abc', max_tokens: 3 });
    expect(JSON.parse(suffixJson(completions, 2))).toEqual({ prompt: 'c', max_tokens: 3 });
  });
});

describe('token prefix', () => {
  it('agrees with a plain loop', () => {
    const a = Int32Array.from({ length: 1000 }, (_, i) => i);
    for (const cut of [0, 1, 499, 999, 1000]) {
      const b = Int32Array.from(a);
      if (cut < 1000) b[cut] = -1;
      expect(commonTokenPrefix(a, b)).toBe(commonPrefix(a, b));
      expect(commonTokenPrefix(a.subarray(0, 10), b)).toBe(Math.min(10, cut));
    }
  });
});

describe('group commits', () => {
  it('commits the calls of one turn together; a call that fails fails alone', async () => {
    const store = Store.open(join(tempDir(), 'g.db'));
    const m = [{ role: 'user', content: 'a' }];
    const [a, dup, b] = await Promise.allSettled([
      store.commits.add(call(0, [1, 2], [3], m), true),
      store.commits.add(call(0, [1, 2], [3], m), true), // the same (rollout, seq): refused by the schema
      store.commits.add(call(1, [1, 2, 3, 4], [5], m), true),
    ]);
    expect(a.status).toBe('fulfilled');
    expect(dup.status).toBe('rejected');
    expect(b.status).toBe('fulfilled');
    expect(store.calls.list('ro_1').map((c) => [c.seq, Array.from(c.promptIds!)])).toEqual([
      [0, [1, 2]],
      [1, [1, 2, 3, 4]],
    ]);
    store.close();
  });

  it('refuses every call of a group it could not commit, and later calls refer to none of them', async () => {
    const store = Store.open(join(tempDir(), 'h.db'));
    const m = [{ role: 'user', content: 'a' }];
    await store.commits.add(call(0, [1, 2], [3], m), true);
    // The group's second insert rolls the whole transaction back (as a full disk would): call 1 was inserted, then
    // undone, after the store had kept it as a reference for the rollout's later calls.
    store.db.exec(`CREATE TEMP TRIGGER boom AFTER INSERT ON calls WHEN NEW.seq = 2
      BEGIN SELECT RAISE(ROLLBACK, 'the disk is full'); END`);
    // The failing insert in the middle: the one after it must not be committed on its own.
    const refused = await Promise.allSettled([
      store.commits.add(call(1, [1, 2, 3, 4], [5], m), true),
      store.commits.add(call(2, [1, 2, 3, 4, 5, 6], [7], m), true),
      store.commits.add(call(4, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [11], m), true),
    ]);
    expect(refused.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    store.db.exec('DROP TRIGGER boom');
    await store.commits.add(call(3, [1, 2, 3, 4, 5, 6, 7, 8], [9], m), true);
    const stored = store.calls.list('ro_1');
    expect(stored.map((c) => c.seq)).toEqual([0, 3]);
    expect(Array.from(stored[1].promptIds!)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    store.close();
  });
});

// A logprob the engine did not give (null in its answer) is NaN in the store, never 0 (probability 1): read back as
// missing, and merged and batched as the docs say missing logprobs are (0 on a token still trained on).
describe('a missing logprob', () => {
  it('is kept missing by the store, and merged and batched as missing (0), not as NaN', () => {
    const store = Store.open(':memory:');
    store.calls.add({ ...call(0, [1, 2], [10, 11], []), completionLogprobs: [-0.5, Number.NaN] });
    store.calls.add({ ...call(1, [1, 2, 10, 11, 3], [12], []), completionLogprobs: [Number.NaN] });
    expect(store.calls.list('ro_1').map((c) => c.completionLogprobs)).toEqual([[-0.5, Number.NaN], [Number.NaN]]);
    const { rows } = mergeCalls(store.calls.tokenCalls('ro_1'), 'trajectory');
    expect(Array.from(rows[0].mask)).toEqual([0, 0, 1, 1, 0, 1]);
    expect(Array.from(rows[0].logprobs)).toEqual([0, 0, -0.5, 0, 0, 0]);
    const { tensors } = buildBatch([{ rolloutId: 'ro_1', groupId: null, reward: 1, rows }], {
      advantage: 'grpo',
      lossNorm: 'token-mean',
      missingReward: 'zero',
      maxResponseTokens: 16,
    });
    expect(Array.from(tensors.rollout_logprobs)).toEqual([0, 0, -0.5, 0, 0, 0]);
    store.close();
  });

  it("keeps each call's finish reason for the merge, so a reply cut at max_tokens can be left out", () => {
    const store = Store.open(':memory:');
    store.calls.add(call(0, [1, 2], [10, 11], []));
    store.calls.add({ ...call(1, [1, 2, 10, 11, 3], [12], []), finishReason: 'length' });
    expect(store.calls.tokenCalls('ro_1').map((c) => c.finishReason)).toEqual(['stop', 'length']);
    store.close();
  });
});
