import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { alight } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { tinyModel } from '../helpers/tiny-model.js';

// The calculator example's agent (the OpenAI Agents SDK, unmodified, over Chat Completions) recorded against a model
// folder that `alight record --serve-worker` serves on the torch worker, as bench:agent evaluates: the SDK's tools
// reach the worker, which renders them with the folder's template (examples/calculator/chat_template.jinja). The tiny
// model answers nonsense; what is checked is the path, not the answers (bench:agent measures those).
const example = join(import.meta.dirname, '..', '..', 'examples', 'calculator');

describe('an Agents SDK agent with a tool, served by the torch worker', () => {
  it('records each episode with the tools the SDK sent rendered into the prompt the worker sampled from', async () => {
    const model = tinyModel();
    copyFileSync(join(example, 'chat_template.jinja'), join(model, 'chat_template.jinja'));
    const dir = tempDir();
    const tasks = join(dir, 'tasks.jsonl');
    writeFileSync(tasks, readFileSync(join(example, 'heldout.jsonl'), 'utf8').split('\n').slice(0, 2).join('\n'));
    const args = ['record', '--serve-worker', model, '--tasks', tasks, '--concurrency', '2', '--run', 'tools'];
    const res = await alight([...args, '--json', '--', 'node', join(example, 'harness.mjs')], {
      cwd: dir,
      env: { CALCULATOR_MAX_TOKENS: '8', CALCULATOR_MAX_TURNS: '1' },
      timeoutMs: 300_000,
    });
    expect(res.code, res.stderr).toBe(0);
    const list = await alight(['traces', 'list', '--run', 'tools', '--json'], { cwd: dir });
    const rollouts = JSON.parse(list.stdout) as { id: string; state: string; reward: number | null }[];
    expect(rollouts.map((r) => [r.state, r.reward])).toEqual([
      ['succeeded', 0],
      ['succeeded', 0],
    ]);
    const shown = JSON.parse((await alight(['traces', 'show', rollouts[0].id, '--json'], { cwd: dir })).stdout);
    const call = shown.calls[0];
    expect(call.request.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(['calculate']);
    // The tiny model's tokenizer is one character a token: the prompt's ids spell what the worker rendered.
    const tokenizer = JSON.parse(readFileSync(join(model, 'tokenizer.json'), 'utf8')) as {
      model: { vocab: Record<string, number> };
    };
    const byId = new Map(Object.entries(tokenizer.model.vocab).map(([ch, id]) => [id, ch]));
    const prompt = (call.prompt_token_ids as number[]).map((id) => byId.get(id) ?? '').join('');
    expect(prompt).toContain('Tools (call one as <tool_call>');
    expect(prompt).toContain('"name": "calculate"');
    expect(shown.rewards[0].reason).toMatch(/tool calls; /);
  }, 300_000);
});
