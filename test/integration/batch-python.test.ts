import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildBatch } from '../../src/samples/batch.js';
import { mergeCalls } from '../../src/samples/merge.js';
import { writeSafetensors } from '../../src/samples/safetensors.js';
import { envPython } from '../../src/setup/python-env.js';
import { tempDir } from '../helpers/gateway.js';

describe('the batch file', () => {
  it('reads back in Python with the safetensors library: dtypes, shapes, values and metadata', () => {
    const python = envPython();
    const calls = [
      { seq: 0, status: 'ok', promptIds: [5, 6, 7], completionIds: [8, 9], completionLogprobs: [-0.5, -0.25] },
      { seq: 1, status: 'ok', promptIds: [5, 6, 7, 8, 9, 10], completionIds: [11], completionLogprobs: [-0.125] },
    ];
    const rows = mergeCalls(calls, 'trajectory').rows;
    const batch = buildBatch(
      [
        { rolloutId: 'r1', groupId: 'g', reward: 1, rows },
        { rolloutId: 'r2', groupId: 'g', reward: 0, rows: mergeCalls([calls[0]], 'trajectory').rows },
      ],
      { advantage: 'grpo', lossNorm: 'per-rollout-mean', missingReward: 'zero', maxResponseTokens: 32 },
    );
    const path = join(tempDir(), 'batch.safetensors');
    writeSafetensors(path, batch.tensors, { alight: JSON.stringify(batch.meta) });
    const script =
      `
import json, sys
from safetensors import safe_open
with safe_open(sys.argv[1], framework="np") as f:
    out = {k: {"dtype": str(f.get_tensor(k).dtype), "shape": list(f.get_tensor(k).shape), ` +
      `"values": f.get_tensor(k).tolist()} for k in f.keys()}
    out["__metadata__"] = json.loads(f.metadata()["alight"])
print(json.dumps(out))`;
    const read = JSON.parse(execFileSync(python, ['-c', script, path], { encoding: 'utf8' }));
    const dtypes = {
      input_ids: 'int32',
      row_offsets: 'int64',
      prompt_lengths: 'int32',
      loss_mask: 'uint8',
      rollout_logprobs: 'float32',
      advantages: 'float32',
      loss_weights: 'float32',
      rollout_index: 'int32',
    };
    for (const [name, dtype] of Object.entries(dtypes)) {
      const tensor = batch.tensors[name];
      expect(read[name].dtype).toBe(dtype);
      expect(read[name].shape).toEqual([tensor.length]);
      expect(read[name].values).toEqual(Array.from(tensor as ArrayLike<number | bigint>, Number));
    }
    expect(read.input_ids.values).toEqual([5, 6, 7, 8, 9, 10, 11, 5, 6, 7, 8, 9]);
    expect(read.__metadata__).toEqual(batch.meta);
  });
});
