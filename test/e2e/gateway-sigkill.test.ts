import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { BIN } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { type ScriptedUpstream, startScriptedUpstream } from '../helpers/scripted-upstream.js';

let upstream: ScriptedUpstream;
beforeAll(async () => {
  // Streams of very different lengths, so that some finish before the kill and some do not.
  upstream = await startScriptedUpstream({
    reply: (i) => `r${i} ${'x'.repeat((i % 25) * 40)}`,
    tokensPerChunk: 4,
    chunkDelayMs: 15,
  });
});
afterAll(async () => upstream.close());

describe('gateway killed with SIGKILL', () => {
  it('loses no call that had completed before the kill, among 50 concurrent streams', async () => {
    const db = join(tempDir(), 'alight.db');
    const key = 'sigkill-admin-key';
    const gw = spawn(
      process.execPath,
      [BIN, 'gateway', '--db', db, '--upstream', upstream.url, '--admin-key', key, '--json'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const closed = once(gw, 'close');
    const [line] = await once(gw.stdout, 'data');
    const { url } = JSON.parse(String(line));

    const completed: { rollout: string; text: string }[] = [];
    const clients = Array.from({ length: 50 }, async (_, i) => {
      const res = await fetch(`${url}/api/rollouts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ run: 'kill', task_id: `t${i}` }),
      });
      const r = await res.json();
      const openai = new OpenAI({ baseURL: r.openai_base_url, apiKey: r.token, maxRetries: 0 });
      const stream = await openai.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: `client ${i}` }],
        stream: true,
      });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
      completed.push({ rollout: r.rollout_id, text });
    });
    // Kill once some streams have completed and, the streams being of very different lengths, many have not.
    await expect.poll(() => completed.length, { timeout: 30_000, interval: 10 }).toBeGreaterThanOrEqual(10);
    gw.kill('SIGKILL');
    const results = await Promise.allSettled(clients);
    await closed;

    const cut = results.filter((r) => r.status === 'rejected').length;
    expect(completed.length).toBeGreaterThan(5);
    expect(cut).toBeGreaterThan(5);
    const store = Store.open(db);
    for (const { rollout, text } of completed) {
      const calls = store.calls.list(rollout);
      expect(calls).toHaveLength(1);
      expect(calls[0].status).toBe('ok');
      const produced = upstream.log.find(
        (p) =>
          (p.request.messages as { content: string }[])[0].content ===
          (calls[0].request.messages as { content: string }[])[0].content,
      )!;
      expect(calls[0].completionIds).toEqual(produced.completionIds);
      expect((calls[0].response as { choices: { message: { content: string } }[] }).choices[0].message.content).toBe(
        text,
      );
    }
    expect(store.db.pragma('integrity_check', { simple: true })).toBe('ok');
    store.close();
  });
});

describe('gateway stopped with SIGTERM', () => {
  it('drains the streams in flight, then exits 0', async () => {
    const slow = await startScriptedUpstream({ reply: () => 'y'.repeat(80), tokensPerChunk: 4, chunkDelayMs: 30 });
    const db = join(tempDir(), 'alight.db');
    const gw = spawn(process.execPath, [BIN, 'gateway', '--db', db, '--upstream', slow.url, '--json'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ALIGHT_ADMIN_KEY: 'drain-test-admin-key' },
    });
    const closed = once(gw, 'close');
    const [line] = await once(gw.stdout, 'data');
    const { url } = JSON.parse(String(line));
    const r = await (
      await fetch(`${url}/api/rollouts`, {
        method: 'POST',
        headers: { authorization: 'Bearer drain-test-admin-key', 'content-type': 'application/json' },
        body: '{}',
      })
    ).json();
    const openai = new OpenAI({ baseURL: r.openai_base_url, apiKey: r.token, maxRetries: 0 });
    const stream = await openai.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'drain me' }],
      stream: true,
    });
    gw.kill('SIGTERM');
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('y'.repeat(80));
    const [code] = await closed;
    expect(code).toBe(0);
    const store = Store.open(db);
    expect(store.calls.list(r.rollout_id).map((c) => c.status)).toEqual(['ok']);
    store.close();
    await slow.close();
  });
});
