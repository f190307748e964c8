import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { startGateway } from '../../src/gateway/server.js';
import type { ManagedServe } from '../../src/serve/managed.js';
import { Store } from '../../src/store/store.js';
import { ADMIN_KEY, tempDir } from '../helpers/gateway.js';
import { startServe, testModel } from '../helpers/model.js';

const KEY = 'serve-admin-key-0123456789';
// The model on two cores shared with the rest of the suite runs many times slower than alone: only a hang is bounded.
const patience = 10 * 60_000;
let serve: ManagedServe;
beforeAll(async () => {
  serve = await startServe(['--parallel', '2', '--ctx', '1024'], { ALIGHT_ADMIN_KEY: KEY });
}, patience);
afterAll(async () => serve?.stop());

const reload = (body: unknown, key: string | null = KEY) =>
  fetch(`${serve.url.replace(/\/v1$/, '')}/admin/reload`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key && { authorization: `Bearer ${key}` }) },
    body: JSON.stringify(body),
  });

describe('alight serve reload', { timeout: patience }, () => {
  it(
    'swaps weights without dropping the port: calls in flight ' +
      'finish on the old version, the gateway stamps each call',
    async () => {
      const store = Store.open(join(tempDir(), 'alight.db'));
      const config = configSchema.parse({ upstream: { url: serve.url, kind: 'vllm' } });
      const gateway = await startGateway({
        store,
        gateway: config.gateway,
        upstream: config.upstream,
        adminKey: ADMIN_KEY,
      });
      const { rollout, token } = gateway.rollouts.create({ run: 'reload' });
      const openai = new OpenAI({
        baseURL: `${gateway.url}/r/${token}/v1`,
        apiKey: token,
        maxRetries: 0,
        timeout: patience,
      });
      const ask = (content: string, max_tokens: number) =>
        openai.chat.completions.create({
          model: 'x',
          messages: [{ role: 'user', content }],
          max_tokens,
          stream: true,
          seed: 1,
        });

      expect((await reload({ path: await testModel(), version: 1 }, null)).status).toBe(401);
      const before = (await ask('tell a long story', 200))[Symbol.asyncIterator]();
      let text = ((await before.next()).value as OpenAI.ChatCompletionChunk).choices[0]?.delta?.content ?? '';
      // The reload completes while that stream is still being generated …
      const answer = await reload({ path: await testModel(), version: 1 });
      expect(answer.status).toBe(200);
      expect(await answer.json()).toMatchObject({ version: 1 });
      expect(store.calls.count(rollout.id)).toBe(0);
      // … and the stream goes on, on the old weights.
      let finish: string | null | undefined;
      for (let c = await before.next(); !c.done; c = await before.next()) {
        text += c.value.choices[0]?.delta?.content ?? '';
        finish = c.value.choices[0]?.finish_reason ?? finish;
      }
      // (Seeded, so the model does not end its story before the reload is done.)
      expect([text.length > 0, finish]).toEqual([true, 'length']);
      for await (const c of await ask('and now?', 4)) void c;

      expect(store.calls.list(rollout.id).map((c) => [c.status, c.modelVersion])).toEqual([
        ['ok', 0],
        ['ok', 1],
      ]);
      const bad = await reload({ path: '/nowhere.gguf', version: 2 });
      expect(bad.status).toBe(400);
      expect((await bad.json()).error.message).toMatch(/cannot load \/nowhere\.gguf/);
      await gateway.close();
      store.close();
    },
  );
});
