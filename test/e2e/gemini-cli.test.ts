import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/gateway.js';
import { harnessBin, harnesses } from '../helpers/harnesses.js';

// The real Gemini CLI (pinned), unchanged, through the gateway's Gemini API: one shell-tool round trip inside a network
// namespace this test makes (`unshare -n`, only loopback up), the CLI under strace (test/fixtures/gemini-cli-rig.mts).
const ROOT = new URL('../../', import.meta.url).pathname;

describe(`Gemini CLI ${harnesses.gemini.version}`, () => {
  it('runs a shell tool and answers through the gateway, every call recorded and labelled, no connection elsewhere', () => {
    const dir = tempDir();
    const fixture = join(ROOT, 'test', 'fixtures', 'gemini-cli-rig.mts');
    const out = execFileSync(
      'unshare',
      ['-n', 'sh', '-c', `ip link set lo up && exec node --import tsx ${fixture} ${harnessBin('gemini')} ${dir}`],
      { cwd: ROOT, encoding: 'utf8', timeout: 300_000 },
    );
    const run = JSON.parse(out) as {
      code: number;
      answer: string;
      stderr: string;
      gateway: string;
      calls: { protocol: string; status: string; stream: boolean; purpose: string }[];
      upstream: number;
      rows: number;
      rowsWithSideCalls: number;
      connects: string[];
    };
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.answer).response).toContain('hello from alight');
    // The CLI's model router (its default model is "auto"), the tool call, the answer (both Gemini streams), then its
    // next-speaker check: all recorded, all reached the model, the CLI's own calls labelled with what they are for.
    expect(run.calls).toEqual([
      { protocol: 'gemini', status: 'ok', stream: false, purpose: 'router' },
      { protocol: 'gemini', status: 'ok', stream: true, purpose: 'main' },
      { protocol: 'gemini', status: 'ok', stream: true, purpose: 'main' },
      { protocol: 'gemini', status: 'ok', stream: false, purpose: 'next-speaker' },
    ]);
    expect(run.upstream).toBe(4);
    // The CLI sends the call back by its id: the model's own text restored, one row of the agent's turns; the side
    // calls, each a context of its own, would have made two more.
    expect(run.rows).toBe(1);
    expect(run.rowsWithSideCalls).toBe(3);
    // Every socket the CLI connected: the gateway's, or a local Unix socket (name lookups); no DNS, nothing outside.
    const port = new URL(run.gateway).port;
    const gateway = `{sa_family=AF_INET, sin_port=htons(${port}), sin_addr=inet_addr("127.0.0.1")}`;
    expect(run.connects).toContain(gateway);
    for (const c of run.connects) expect(c === gateway || c.startsWith('{sa_family=AF_UNIX'), c).toBe(true);
  }, 600_000);
});
