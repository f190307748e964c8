import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { type ScriptedUpstream, startScriptedUpstream } from '../helpers/scripted-upstream.js';

let upstream: ScriptedUpstream;
beforeAll(async () => {
  upstream = await startScriptedUpstream({});
});
afterAll(async () => upstream.close());

const rssMb = (pid: number): number =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

describe('gateway memory with rollouts never ended', () => {
  it('keeps at most gateway.cacheRollouts rollouts in memory, drops idle ones, and stays under its bound', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'alight.config.yaml'), 'gateway:\n  cacheRollouts: 32\n  cacheIdleS: 3\n');
    const key = 'memory-admin-key-0';
    const gw = spawn(
      process.execPath,
      [BIN, 'gateway', '--db', join(dir, 'alight.db'), '--upstream', upstream.url, '--admin-key', key, '--json'],
      { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const [line] = await once(gw.stdout, 'data');
    const { url } = JSON.parse(String(line));
    const admin = async (path: string, body?: unknown) =>
      (
        await fetch(`${url}${path}`, {
          method: body ? 'POST' : 'GET',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        })
      ).json();
    try {
      // 300 rollouts, none ended, each with two calls on a ~100 KB history of its own.
      const history = (i: number) =>
        Array.from({ length: 50 }, (_, t) => ({
          role: (t % 2 ? 'assistant' : 'user') as 'assistant' | 'user',
          content: `r${i} t${t} ${'w '.repeat(1000)}`,
        }));
      const clients: OpenAI[] = [];
      for (let i = 0; i < 300; i++) {
        const r = await admin('/api/rollouts', { run: 'mem', task_id: `t${i}` });
        clients.push(new OpenAI({ baseURL: r.openai_base_url, apiKey: r.token, maxRetries: 0 }));
      }
      const rssBefore = rssMb(gw.pid!);
      for (let turn = 0; turn < 2; turn++) {
        for (let i = 0; i < 300; i += 10) {
          await Promise.all(
            clients.slice(i, i + 10).map((c, j) =>
              c.chat.completions.create({
                model: 'm',
                messages: [...history(i + j), { role: 'user', content: `turn ${turn}` }],
              }),
            ),
          );
        }
      }
      const state = await admin('/api/state');
      expect(state.cachedRollouts).toBeLessThanOrEqual(32);
      // Unbounded (every rollout kept), this load grows the gateway by ~350 MB; bounded, by ~130 MB (32 rollouts
      // cached, the rest SQLite's cache and the heap's slack).
      expect(rssMb(gw.pid!) - rssBefore).toBeLessThan(200);
      // Idle ones are dropped: after the idle time, one more call leaves only its own rollout cached.
      await new Promise((r) => setTimeout(r, 3500));
      await clients[0].chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'again' }] });
      expect((await admin('/api/state')).cachedRollouts).toBe(1);
    } finally {
      gw.kill('SIGTERM');
      await once(gw, 'close');
    }
  }, 300_000);
});
