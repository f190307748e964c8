import { describe, expect, it } from 'vitest';
import { vllmArgs, vllmMaxLoraRank } from '../../src/serve/vllm.js';

describe("vLLM's command line", () => {
  it('rounds an adapter rank up to the --max-lora-rank vLLM accepts, and has none above its largest', () => {
    expect([1, 2, 4, 8, 9, 300, 320, 512].map(vllmMaxLoraRank)).toEqual([1, 8, 8, 8, 16, 320, 320, 512]);
    expect(vllmMaxLoraRank(513)).toBeNull();
  });

  it('serves an adapter under its own name on the base model, one adapter at a time', () => {
    const args = vllmArgs(
      { model: '/m/base', logFile: '/l', lora: { name: 'alight-policy', adapter: '/r/adapter-0', rank: 4 } },
      'cpu',
      8000,
    );
    expect(args.join(' ')).toContain(
      '--enable-lora --max-loras 1 --max-lora-rank 8 --lora-modules alight-policy=/r/adapter-0',
    );
    expect(args[args.indexOf('--model') + 1]).toBe('/m/base');
    expect(vllmArgs({ model: '/m', logFile: '/l' }, 'cpu', 8000)).not.toContain('--enable-lora');
  });

  it('refuses an adapter above the largest rank vLLM serves, saying so', () => {
    const lora = { name: 'p', adapter: '/a', rank: 1024 };
    expect(() => vllmArgs({ model: '/m', logFile: '/l', lora }, 'cpu', 8000)).toThrow(
      'LoRA rank 1024 is above the largest vLLM serves (512)',
    );
  });
});
