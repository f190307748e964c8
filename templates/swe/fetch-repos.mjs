#!/usr/bin/env node
// Clones each repository the tasks name into repos/<owner>__<name> (bare, full history), where swe-agent.mjs and
// `alight eval --repos` find them. Usage: node fetch-repos.mjs tasks.jsonl [repos]
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const [file, dir = 'repos'] = process.argv.slice(2);
if (!file) throw new Error('usage: node fetch-repos.mjs tasks.jsonl [repos]');
const repos = new Set(readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).repo));
for (const repo of repos) {
  const dest = join(dir, repo.replace('/', '__'));
  if (existsSync(dest)) continue;
  console.log(`cloning ${repo}`);
  execFileSync('git', ['clone', '--quiet', '--bare', `https://github.com/${repo}.git`, dest], { stdio: 'inherit' });
}
