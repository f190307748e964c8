import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram, exitCodeMeanings } from '../../commands/index.js';
import { ExitCode } from '../../src/errors.js';
import { packageRoot } from '../../src/package-root.js';
import { alight, BIN } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { type ScriptedUpstream, startScriptedUpstream } from '../helpers/scripted-upstream.js';
import { makeSweRepo } from '../helpers/swe-repo.js';

describe('alight --help', () => {
  it('lists every command, and every command has examples', async () => {
    const top = await alight(['--help']);
    expect(top.code).toBe(0);
    for (const cmd of ['init', 'record', 'gateway', 'traces', 'runs'])
      expect(top.stdout).toMatch(new RegExp(`^  ${cmd}\\b`, 'm'));
    for (const cmd of [
      ['init'],
      ['record'],
      ['gateway'],
      ['traces', 'list'],
      ['traces', 'show'],
      ['traces', 'export'],
      ['runs', 'list'],
    ]) {
      const res = await alight([...cmd, '--help']);
      expect(res.code).toBe(0);
      expect(res.stdout).toContain('Examples:');
      expect(res.stdout).toContain(`$ alight ${cmd.join(' ')}`);
    }
    const bad = await alight(['record', '--concurrency', 'many', '--', 'x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('expected a whole number, got many');
  });
});

/** The options commander hands an action for `argv`, the action itself not run. */
async function parsedOptions(argv: string[]): Promise<Record<string, unknown>> {
  const program = buildProgram();
  let got: Record<string, unknown> | undefined;
  const capture = (command: Command): void => {
    command.action((...args: unknown[]) => {
      got = args.at(-2) as Record<string, unknown>;
    });
    command.commands.forEach(capture);
  };
  program.commands.forEach(capture);
  await program.parseAsync(argv, { from: 'user' });
  return got!;
}

describe('alight --version and --help', () => {
  it("reports package.json's version", async () => {
    const { version } = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8'));
    const res = await alight(['--version']);
    expect(res.code).toBe(0);
    expect(res.stdout.trim()).toBe(version);
  });

  it('lists every exit code, as the README does', async () => {
    const res = await alight(['--help']);
    const readme = readFileSync(join(packageRoot, 'README.md'), 'utf8');
    for (const [name, code] of Object.entries(ExitCode)) {
      const meaning = exitCodeMeanings[name as keyof typeof ExitCode];
      expect(res.stdout).toMatch(new RegExp(`^ +${code}  ${meaning.replace(/[()]/g, '\\$&')}$`, 'm'));
      expect(readme).toContain(`| ${code} | ${meaning} |`);
    }
  });
});

describe('one vocabulary across commands', () => {
  it('eval spells -n, --concurrency and --run as record and train do; -k, --workers and --run-id still work', async () => {
    const tail = ['--tasks', 't.jsonl', '--', 'node', 'agent.mjs'];
    const current = await parsedOptions(['eval', 'swebench', '-n', '3', '--concurrency', '5', '--run', 'r', ...tail]);
    expect(current).toMatchObject({ n: 3, concurrency: 5, run: 'r' });
    const old = await parsedOptions(['eval', 'swebench', '-k', '3', '--workers', '5', '--run-id', 'r', ...tail]);
    expect(old).toEqual(current);
    expect(await parsedOptions(['eval', 'swebench', '--rollouts', '3', ...tail])).toMatchObject({ n: 3 });
    const grade = ['eval', 'grade', '--predictions', 'p.jsonl', '--tasks', 't.jsonl'];
    expect(await parsedOptions([...grade, '--workers', '4'])).toEqual(
      await parsedOptions([...grade, '--concurrency', '4']),
    );
    expect(await parsedOptions(['record', '-n', '2', '--concurrency', '3', '--tasks', 't', '--', 'x'])).toMatchObject({
      n: 2,
      concurrency: 3,
    });
    // The old spellings are not listed.
    const help = await alight(['eval', 'swebench', '--help']);
    expect(help.stdout).toContain('-n, --rollouts <n>');
    expect(help.stdout).not.toMatch(/--run-id|--workers|-k </);
  });

  it('refuses a flag that does not apply, as a usage error', async () => {
    const dir = tempDir();
    for (const [argv, message] of [
      [['record', '-n', '2', '--', 'x'], "option '-n, --rollouts <n>' applies only with --tasks"],
      [['data', 'export', '--out', 'x.jsonl', '--seed', '3'], "option '--seed <seed>' applies only with --split"],
      [['doctor', '--setup', '--upstream', 'http://127.0.0.1:9/v1'], "option '--setup' cannot be used with"],
      [['train', '--verl', 'a=b', '--dry-run', '--', 'x'], '--verl: read by the verl backend only'],
      [['record', '--image', 'agent:1', '--', 'x'], '--image applies only with --runner k8s'],
      [['record', '--runner', 'k8s', '--', 'x'], 'the Kubernetes runner needs an image'],
      [['doctor', '--namespace', 'rl'], "option '--namespace <ns>' applies only with --runner"],
      [
        ['eval', 'swebench', '--tasks', 't.jsonl', '--namespace', 'rl', '--repos', '.', '--', 'x'],
        'applies only with --runtime',
      ],
      [
        ['eval', 'grade', '--predictions', 'p.jsonl', '--tasks', 't.jsonl', '--namespace', 'rl'],
        "option '--namespace <ns>' applies only with --grader",
      ],
      [
        ['eval', 'grade', '--predictions', 'p.jsonl', '--tasks', 't.jsonl', '--grader', 'podman', '--namespace', 'rl'],
        '--namespace applies only with --grader k8s',
      ],
    ]) {
      const res = await alight(argv as string[], { cwd: dir });
      expect(res.code, res.stderr).toBe(2);
      expect(res.stderr).toContain(message);
    }
  });
});

describe('alight init, then record with the scaffolded harness', () => {
  let upstream: ScriptedUpstream;
  beforeAll(async () => {
    upstream = await startScriptedUpstream({ reply: (i) => (i % 2 === 0 ? 'Let me think: 42' : '42') });
  });
  afterAll(async () => upstream.close());

  it('scaffolds a project whose harness and tasks run as written', async () => {
    const dir = tempDir();
    const init = await alight(['init', dir]);
    expect(init.code).toBe(0);
    for (const f of ['alight.config.yaml', 'harness.mjs', 'tasks.jsonl']) expect(existsSync(join(dir, f))).toBe(true);
    const again = await alight(['init', dir]);
    expect(again.code).toBe(3);
    expect(again.stderr).toContain('already exist; pass --force');

    // The config file is read from the working folder; the flag overrides its upstream.
    const rec = await alight(
      [
        'record',
        '--upstream',
        upstream.url,
        '--run',
        'demo',
        '--tasks',
        'tasks.jsonl',
        '-n',
        '2',
        '--',
        'node',
        'harness.mjs',
      ],
      { cwd: dir },
    );
    expect(rec.code, rec.stderr).toBe(0);
    expect(rec.stdout).toMatch(/run demo: 6 rollouts, 6 succeeded, 0 failed, 12 calls/);
    expect(rec.stdout).toMatch(/add-1\s+2\s+2\s+0\s+4\s+1\.000/);
    expect(existsSync(join(dir, '.alight', 'alight.db'))).toBe(true);

    const runs = await alight(['runs', 'list'], { cwd: dir });
    expect(runs.stdout).toMatch(/demo\s+record\s+\S+\s+6\s+6\s+0\s+12\s+1\.000/);
    const list = await alight(['traces', 'list', '--run', 'demo', '--json'], { cwd: dir });
    const rows = JSON.parse(list.stdout);
    expect(rows).toHaveLength(6);
    const show = await alight(['traces', 'show', rows[0].id], { cwd: dir });
    expect(show.stdout).toContain(`rollout ${rows[0].id}  run demo`);
    expect(show.stdout).toMatch(/^1\s+openai\.chat\s+yes\s+ok/m);
    const log = readFileSync(join(dir, '.alight', 'runs', 'demo', 'rollouts', `${rows[0].id}.stdout.log`), 'utf8');
    expect(log).toContain('(reward 1)');
    const missing = await alight(['traces', 'show', 'ro_nope'], { cwd: dir });
    expect(missing.code).toBe(3);
    expect(missing.stderr).toBe('alight: no rollout ro_nope\n');
    const unwritable = await alight(['traces', 'export', '--out', join(dir, 'no', 'such', 'dir', 'x.jsonl')], {
      cwd: dir,
    });
    expect(unwritable.code).toBe(3);
    expect(unwritable.stderr).toMatch(/^alight: cannot write .*x\.jsonl: ENOENT/);
  });
});

describe('alight init --template swe', () => {
  it('scaffolds a SWE agent that fixes an instance: graded by eval ' +
    'swebench, and rewarded by its own eval reward under record', async () => {
    const dir = tempDir();
    const init = await alight(['init', '--template', 'swe', dir]);
    expect(init.code, init.stderr).toBe(0);
    for (const f of ['alight.config.yaml', 'swe-agent.mjs', 'fetch-repos.mjs'])
      expect(existsSync(join(dir, f))).toBe(true);
    expect(init.stdout).toMatch(/alight doctor --setup --backend verl/);
    const fx = makeSweRepo(dir); // dir/repos/acme__calc, where the agent looks
    writeFileSync(join(dir, 'swe.jsonl'), `${JSON.stringify(fx.instance)}\n`);
    // A model that answers the issue with one bash block, then submits.
    const model = await startScriptedUpstream({
      reply: (_, body) =>
        (body.messages as unknown[]).length <= 2 ? "```bash\nsed -i 's/a - b/a + b/' calc.py\n```" : 'SUBMIT',
    });
    try {
      const env = { ALIGHT_CLI: BIN };
      const rec = await alight(
        ['record', '--upstream', model.url, '--tasks', 'swe.jsonl', '--run', 'swe', '--', 'node', 'swe-agent.mjs'],
        { cwd: dir, env, timeoutMs: 120_000 },
      );
      expect(rec.code, rec.stderr).toBe(0);
      expect(rec.stdout).toMatch(/acme__calc-1\s+1\s+1\s+0\s+2\s+1\.000/); // 2 calls, reward 1 from alight eval reward
      const ev = await alight(
        [
          'eval',
          'swebench',
          '--tasks',
          'swe.jsonl',
          '--repos',
          'repos',
          '--upstream',
          model.url,
          '--run',
          'swe-ev',
          '--json',
          '--',
          'node',
          join(dir, 'swe-agent.mjs'),
        ],
        { cwd: dir, env, timeoutMs: 120_000 },
      );
      expect(ev.code, ev.stderr).toBe(0);
      expect(JSON.parse(ev.stdout)).toMatchObject({ resolved_ids: ['acme__calc-1'] });
    } finally {
      await model.close();
    }
  }, 180_000);
});
