#!/usr/bin/env node
// A minimal SWE agent for alight (plain fetch, no dependencies): the model answers with one ```bash block a turn, the
// block runs in the task's repository, its output goes back, until the model says SUBMIT or the turns run out.
// Swap in your own agent: alight only needs it to call OPENAI_BASE_URL.
//
// Where it works:
// - alight eval swebench --runtime docker|podman: in the instance's container (ALIGHT_CONTAINER, via `exec`);
// - alight eval swebench --repos repos/: in the fresh workspace alight made (the current folder);
// - alight train / record (--from-db or --tasks with SWE-bench rows): in a workspace it makes from repos/ at the
//   task's base commit, and grades its own diff with `alight eval reward` (ALIGHT_CLI, else alight on PATH) for the reward.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const task = JSON.parse(process.env.ALIGHT_TASK_JSON ?? 'null');
if (!task?.problem_statement) throw new Error('ALIGHT_TASK_JSON holds no SWE-bench row: run me under alight with SWE tasks');
const MAX_TURNS = Number(process.env.SWE_AGENT_TURNS ?? 30);
const MAX_TOKENS = Number(process.env.SWE_AGENT_MAX_TOKENS ?? 1024); // per answer
const REPOS = process.env.SWE_AGENT_REPOS ?? 'repos';

const container = process.env.ALIGHT_CONTAINER;
let workspace = process.cwd();
let own = false;
if (!container && spawnSync('git', ['rev-parse', '--git-dir'], { cwd: workspace }).status !== 0) {
  // No workspace given (train, record): the base commit's tree, committed once, from repos/<owner>__<name>.
  workspace = mkdtempSync(join(tmpdir(), 'swe-agent-'));
  own = true;
  const source = join(REPOS, task.repo.replace('/', '__'));
  execFileSync('sh', ['-c', 'git -C "$1" archive "$2" | tar -x -C "$3" && cd "$3" && git init -q && git add -A && ' +
    'git -c user.name=agent -c user.email=agent@localhost commit -qm base', 'sh', source, task.base_commit, workspace]);
}

// The model's commands see a plain environment: not this process's, which holds the task row (in training, with the
// fix and its tests), the rollout's token and the reward URL.
const plainEnv = { PATH: process.env.PATH, HOME: process.env.HOME, LANG: process.env.LANG ?? 'C.UTF-8' };
// SWE-bench images keep the repository's Python in a conda env named testbed.
const activate = '[ -f /opt/miniconda3/bin/activate ] && . /opt/miniconda3/bin/activate testbed; ';

function run(command) {
  const argv = container
    ? [process.env.ALIGHT_CONTAINER_RUNTIME, ['exec', '-w', process.env.ALIGHT_WORKDIR, container, 'bash', '-c', activate + command]]
    : ['bash', ['-c', command]];
  const res = spawnSync(argv[0], argv[1], { cwd: workspace, env: container ? process.env : plainEnv, encoding: 'utf8', timeout: 120_000, maxBuffer: 16 << 20 });
  const out = `${res.stdout ?? ''}${res.stderr ?? ''}`;
  return `exit ${res.status ?? 'killed (timeout)'}\n${out.length > 8000 ? `${out.slice(0, 4000)}\n…\n${out.slice(-4000)}` : out}`;
}

async function chat(messages) {
  const res = await fetch(`${process.env.OPENAI_BASE_URL}/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${process.env.OPENAI_API_KEY}` },
    body: JSON.stringify({ model: 'policy', messages, max_tokens: MAX_TOKENS, temperature: 1 }),
  });
  if (!res.ok) throw new Error(`model call failed: ${res.status} ${await res.text()}`);
  return (await res.json()).choices[0].message.content ?? '';
}

const messages = [
  { role: 'system', content: 'You fix issues in a Python repository. Each turn, reply with one ```bash block: it runs in the repository ' +
    'root and you see its output. Edit files with sed, python or cat <<EOF. When the fix is done, reply SUBMIT.' },
  { role: 'user', content: `Issue:\n${task.problem_statement}` },
];
try {
  for (let turn = 0; turn < MAX_TURNS; turn++) {
    const reply = await chat(messages);
    messages.push({ role: 'assistant', content: reply });
    if (/\bSUBMIT\b/.test(reply)) break;
    const block = /```(?:bash|sh)?\n([\s\S]*?)```/.exec(reply);
    messages.push({ role: 'user', content: block ? run(block[1]) : 'Reply with one ```bash block, or SUBMIT.' });
  }
  if (process.env.ALIGHT_MODE !== 'val' && own) {
    // The reward: alight's grader on this workspace's diff (tests, guards), 1 or 0.
    const graded = spawnSync(process.env.ALIGHT_CLI ?? 'alight', ['eval', 'reward', '--repos', REPOS, '--workspace', workspace], { encoding: 'utf8' });
    if (graded.error) throw new Error(`cannot run ${process.env.ALIGHT_CLI ?? 'alight'} for the reward: ${graded.error.message} (set ALIGHT_CLI)`);
    const value = Number(graded.stdout.trim() || 0);
    await fetch(process.env.ALIGHT_REWARD_URL, { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ value, reason: graded.stderr.trim().split('\n').at(-1) }) });
  }
} finally {
  if (own) rmSync(workspace, { recursive: true, force: true });
}
