import { join } from 'node:path';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { alight } from '../helpers/cli.js';
import { type Rig, startRig } from '../helpers/gateway.js';
import type { Behaviour } from '../helpers/scripted-upstream.js';

let rig: Rig;
afterEach(async () => rig?.close());

async function setup(script?: (i: number) => Behaviour, overrides = {}) {
  rig = await startRig({ script }, overrides);
  const { rollout, token } = rig.gateway.rollouts.create({ run: 'r' });
  const url = `${rig.gateway.url}/r/${token}/v1/chat/completions`;
  const openai = new OpenAI({ baseURL: `${rig.gateway.url}/r/${token}/v1`, apiKey: token, maxRetries: 0 });
  return { rollout, url, openai };
}

const post = (url: string, body: string, type = 'application/json') =>
  fetch(url, { method: 'POST', headers: { 'content-type': type }, body });

describe('bad requests from the harness', () => {
  it(
    'gives clear errors for malformed JSON, wrong content ' + 'type, bad shape, oversized bodies and unknown routes',
    async () => {
      const { rollout, url } = await setup(undefined, { bodyLimitMb: 0.5 });
      const cases: [Promise<Response>, number, RegExp][] = [
        [post(url, '{"messages": ['), 400, /not valid JSON/],
        [post(url, 'hello', 'text/plain'), 415, /expected content-type application\/json/],
        [post(url, '[1,2]'), 400, /must be a JSON object/],
        [
          post(url, `{"messages": [{"role": "user", "content": ${'['.repeat(200_000)}${']'.repeat(200_000)}}]}`),
          400,
          /deeper than 512 levels/,
        ],
        [
          fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: Buffer.concat([
              Buffer.from('{"messages": [{"role": "user", "content": "caf'),
              Buffer.from([0xc3, 0x28]),
              Buffer.from('"}]}'),
            ]),
          }),
          400,
          /not valid UTF-8/,
        ],
        [post(url, '{"model": "x"}'), 400, /`messages` must be an array/],
        [
          post(url, JSON.stringify({ messages: [{ role: 'user', content: 'x'.repeat(600_000) }] })),
          413,
          /at most 524288 /,
        ],
        [
          post(url.replace('chat/completions', 'embeddings'), '{}'),
          404,
          /no route POST .*: the gateway serves the policy generating, not embeddings/,
        ],
        [fetch(url.replace(/\/r\/.*/, '/nowhere')), 404, /no route GET \/nowhere/],
      ];
      for (const [res, status, message] of cases) {
        const r = await res;
        expect(r.status).toBe(status);
        expect((await r.json()).error.message).toMatch(message);
      }
      // None of these reached the upstream or the store.
      expect(rig.upstream.log).toHaveLength(0);
      expect(rig.store.calls.count(rollout.id)).toBe(0);
    },
  );

  it('records the routes a harness asked for that the gateway does not serve, and answers any model name', async () => {
    const { rollout, url } = await setup();
    const base = url.replace('chat/completions', '');
    expect((await post(`${base}embeddings?beta=true&key=secret`, '{}')).status).toBe(404);
    expect((await post(`${base}embeddings`, '{}')).status).toBe(404);
    expect((await post(`${base}audio/speech`, '{}')).status).toBe(404);
    expect(await (await fetch(`${base}models/claude-sonnet-4-5`)).json()).toEqual({
      id: 'claude-sonnet-4-5',
      object: 'model',
      owned_by: 'alight',
    });
    const events = rig.store.events(rollout.id).map((e) => [e.type, JSON.parse(e.data)]);
    expect(events).toEqual([
      ['unserved-route', { method: 'POST', path: '/v1/embeddings' }],
      ['unserved-route', { method: 'POST', path: '/v1/embeddings' }],
      ['unserved-route', { method: 'POST', path: '/v1/audio/speech' }],
    ]);
    const shown = await alight(['traces', 'show', rollout.id, '--db', join(rig.dir, 'alight.db')]);
    expect(shown.stdout).toContain('routes the gateway does not serve: POST /v1/embeddings ×2, POST /v1/audio/speech');
    expect(shown.stdout).not.toContain('secret');
  });

  it('rejects a body over the limit even without content-length', async () => {
    const { url } = await setup(undefined, { bodyLimitMb: 0.01 });
    const body = new ReadableStream({
      start(c) {
        for (let i = 0; i < 30; i++) c.enqueue(new TextEncoder().encode('x'.repeat(1000)));
        c.close();
      },
    });
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
  });
});

describe('upstream failures', () => {
  it('retries 503 before the first byte and records one successful call', async () => {
    const { rollout, openai } = await setup((i) => (i < 2 ? { status: 503 } : 'ok'));
    const answer = await openai.chat.completions.create({
      model: 'x',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    let text = '';
    for await (const c of answer) text += c.choices[0]?.delta?.content ?? '';
    expect(text).toBe('reply 2');
    expect(rig.store.calls.list(rollout.id).map((c) => c.status)).toEqual(['ok']);
  });

  it('relays the upstream status after the retries run out, and records the failure', async () => {
    const { rollout, openai } = await setup(() => ({ status: 503, body: '{"error":{"message":"overloaded"}}' }));
    await expect(openai.chat.completions.create({ model: 'x', messages: [] })).rejects.toMatchObject({ status: 503 });
    const [call] = rig.store.calls.list(rollout.id);
    expect(call).toMatchObject({ status: 'error', httpStatus: 503 });
    expect(call.error).toMatch(/overloaded/);
    expect(rig.upstream.log).toHaveLength(0);
  });

  it('relays the upstream Retry-After with a final 429', async () => {
    const { url } = await setup(() => ({ status: 429, body: '{"error":{"message":"slow down"}}', retryAfter: 7 }), {
      retries: 0,
    });
    const res = await post(url, '{"messages":[]}');
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('7');
  });

  it('answers 502 for a JSON answer that is not an object', async () => {
    const { rollout, openai } = await setup(() => ({ status: 200, body: 'null' }));
    await expect(openai.chat.completions.create({ model: 'x', messages: [] })).rejects.toMatchObject({ status: 502 });
    expect(rig.store.calls.list(rollout.id)[0]).toMatchObject({ status: 'error', httpStatus: 502 });
  });

  it('does not retry a 400 and relays it', async () => {
    const { openai } = await setup(() => ({ status: 400, body: '{"error":{"message":"context too long"}}' }));
    await expect(openai.chat.completions.create({ model: 'x', messages: [] })).rejects.toMatchObject({ status: 400 });
  });

  it('answers 502 with a clear message for garbage, whole or streamed', async () => {
    const { rollout, openai } = await setup(() => 'garbage');
    await expect(openai.chat.completions.create({ model: 'x', messages: [] })).rejects.toMatchObject({ status: 502 });
    const streamed = openai.chat.completions.create({ model: 'x', messages: [], stream: true });
    await expect(streamed).rejects.toMatchObject({ status: 502 });
    const calls = rig.store.calls.list(rollout.id);
    expect(calls.map((c) => c.error)).toEqual([
      expect.stringMatching(/invalid JSON: <html>/),
      expect.stringMatching(/not a JSON object: \{not json/),
    ]);
  });

  it('ends a stream the upstream drops midway with an error the SDK raises, and records it', async () => {
    const { rollout, openai } = await setup(() => 'drop-mid-stream');
    const stream = await openai.chat.completions.create({
      model: 'x',
      messages: [{ role: 'user', content: 'a long one' }],
      stream: true,
    });
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const c of stream) seen.push(c.choices[0]?.delta?.content ?? '');
      })(),
    ).rejects.toThrow(/failed mid-stream/);
    expect(seen.length).toBeGreaterThan(0);
    const [call] = rig.store.calls.list(rollout.id);
    expect(call).toMatchObject({ status: 'error', stream: true });
    expect(call.error).toMatch(/mid-stream/);
    // What did arrive is kept, token ids included.
    expect(call.promptIds).toEqual(rig.upstream.log[0].promptIds);
  });

  it('answers 502 when the upstream is down, after retrying', async () => {
    const { rollout, openai } = await setup();
    await rig.upstream.close();
    await expect(openai.chat.completions.create({ model: 'x', messages: [] })).rejects.toMatchObject({ status: 502 });
    expect(rig.store.calls.list(rollout.id)[0].error).toMatch(/ECONNREFUSED/);
  });

  it('times out a hanging upstream and records the call', async () => {
    const { rollout, openai } = await setup(() => 'hang', { timeoutS: 0.3, retries: 0 });
    await expect(openai.chat.completions.create({ model: 'x', messages: [] })).rejects.toMatchObject({ status: 502 });
    expect(rig.store.calls.list(rollout.id)[0].error).toMatch(/timeout/i);
  });

  it(
    'records a stream the harness abandons after its first ' + 'chunk as an error, though the upstream finished first',
    async () => {
      // A ~1 MB answer in 10 KB chunks: the upstream and the gateway finish at once, the rest waits in the socket's
      // buffers.
      rig = await startRig({ reply: () => 'word '.repeat(200_000), tokensPerChunk: 2000 });
      const { rollout, token } = rig.gateway.rollouts.create({ run: 'r' });
      const openai = new OpenAI({ baseURL: `${rig.gateway.url}/r/${token}/v1`, apiKey: token, maxRetries: 0 });
      const stream = await openai.chat.completions.create({
        model: 'x',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      });
      for await (const chunk of stream) {
        expect(chunk.choices).toBeDefined();
        // The client stops reading only once the gateway has stored the call: the order that used to leave it `ok`.
        await expect.poll(() => rig.store.calls.count(rollout.id), { timeout: 10_000 }).toBe(1);
        break;
      }
      await expect.poll(() => rig.store.calls.list(rollout.id)[0].status, { timeout: 10_000 }).toBe('error');
      expect(rig.store.calls.list(rollout.id)[0].error).toMatch(/unread/);
      // A stream read to its end stays ok.
      const whole = await openai.chat.completions.create({
        model: 'x',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      });
      let text = '';
      for await (const chunk of whole) text += chunk.choices[0]?.delta?.content ?? '';
      expect(text.length).toBe(1_000_000);
      await new Promise((r) => setTimeout(r, 200));
      expect(rig.store.calls.list(rollout.id).map((c) => c.status)).toEqual(['error', 'ok']);
    },
  );

  it('says whose end a call open at close was: a stopped harness, or the gateway under a live one', async () => {
    let reached = 0;
    const { rollout: stopped, url } = await setup(() => {
      reached++;
      return 'hang';
    });
    const { rollout: live, token } = rig.gateway.rollouts.create({ run: 'r' });
    const request = (to: string) =>
      fetch(to, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"messages":[]}' }).catch(
        () => null,
      );
    const pending = [request(url), request(`${rig.gateway.url}/r/${token}/v1/chat/completions`)];
    await expect.poll(() => reached, { timeout: 10_000 }).toBe(2);
    // The runner ended one rollout (its timeout) while a process of its harness still held the connection.
    rig.gateway.rollouts.transition(stopped.id, 'running');
    rig.gateway.rollouts.transition(stopped.id, 'failed', { error: 'timeout after 600 s' });
    await rig.gateway.close();
    await Promise.all(pending);
    expect(rig.store.calls.list(stopped.id)[0].error).toBe(
      'interrupted: the harness was stopped before the answer (its rollout ended failed: timeout after 600 s)',
    );
    expect(rig.store.calls.list(live.id)[0].error).toBe('interrupted: the gateway shut down');
  });

  it('records a call the harness abandons', async () => {
    let reached = 0;
    const { rollout, url } = await setup(() => {
      reached++;
      return 'hang';
    });
    const abort = new AbortController();
    const pending = fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"messages":[]}',
      signal: abort.signal,
    });
    await expect.poll(() => reached, { timeout: 10_000 }).toBe(1); // the gateway has forwarded it
    abort.abort();
    await expect(pending).rejects.toThrow();
    await expect.poll(() => rig.store.calls.count(rollout.id), { timeout: 10_000 }).toBe(1);
    expect(rig.store.calls.list(rollout.id)[0].error).toMatch(/harness disconnected/);
  });
});
