import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RolloutTrace } from '../../src/traces/export.js';
import { alight } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { type ScriptedUpstream, startScriptedUpstream } from '../helpers/scripted-upstream.js';

// Qwen Code 0.15.10 from npm, the newest release that runs on Node 20. It is installed on first use into a
// cache rather than listed as a devDependency: its optional per-platform clipboard packages are not all on the
// registry, which makes `npm ci` refuse a lock file that names it.
const CACHE = fileURLToPath(new URL('../../node_modules/.cache/agents/qwen-code-0.15.10', import.meta.url));
const QWEN = join(CACHE, 'node_modules', '.bin', 'qwen');

let upstream: ScriptedUpstream;
beforeAll(async () => {
  if (!existsSync(QWEN)) {
    mkdirSync(CACHE, { recursive: true });
    writeFileSync(join(CACHE, 'package.json'), '{"private": true}');
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', '@qwen-code/qwen-code@0.15.10'], {
      cwd: CACHE,
      stdio: 'inherit',
    });
  }
  upstream = await startScriptedUpstream({ reply: () => 'Done.' });
}, 180_000);
afterAll(async () => upstream.close());

describe('a real third-party agent CLI', () => {
  it('runs Qwen Code unmodified under alight record and records its calls', async () => {
    const dir = tempDir();
    const home = join(dir, 'home');
    mkdirSync(join(home, '.qwen'), { recursive: true });
    // Telemetry off so that it talks to nothing but the gateway; auto-memory off so one answer is one call.
    writeFileSync(
      join(home, '.qwen', 'settings.json'),
      JSON.stringify({
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
        general: { enableAutoUpdate: false },
        memory: { enableManagedAutoMemory: false },
        security: { auth: { selectedType: 'openai' } },
      }),
    );
    const work = join(dir, 'work');
    mkdirSync(work);
    const db = join(dir, 'alight.db');
    const res = await alight(
      [
        'record',
        '--upstream',
        upstream.url,
        '--db',
        db,
        '--run',
        'qwen',
        '--json',
        '--',
        QWEN,
        '-p',
        'Say done.',
        '--auth-type',
        'openai',
        '--approval-mode',
        'yolo',
      ],
      { cwd: work, env: { HOME: home, OPENAI_MODEL: 'scripted-model' }, timeoutMs: 90_000 },
    );
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ rollouts: 1, succeeded: 1 });

    const exp = await alight(['traces', 'export', '--run', 'qwen', '--db', db]);
    const [trace] = exp.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as RolloutTrace);
    expect(trace.calls.length).toBeGreaterThanOrEqual(1);
    for (const [i, call] of trace.calls.entries()) {
      expect(call).toMatchObject({ status: 'ok', stream: true, protocol: 'openai.chat' });
      expect(call.prompt_token_ids).toEqual(upstream.log[i].promptIds);
      expect(call.completion_token_ids).toEqual(upstream.log[i].completionIds);
      // Qwen Code sends its tools and system prompt: the request is recorded as sent.
      expect((call.request.tools as unknown[]).length).toBeGreaterThan(5);
    }
    expect(JSON.stringify(trace)).not.toContain('alt_');
  }, 150_000);
});
