import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readSafetensors, readSafetensorsMetadata } from '../samples/safetensors.js';

/** One row of a step's batch file: its tokens with their advantages and loss weights, as the trainer got them. */
export interface BatchRow {
  tokens: Int32Array;
  promptLength: number;
  mask: Uint8Array;
  advantages: Float32Array;
  weights: Float32Array;
}

/**
 * What a training run actually trained on: the batch files its steps wrote (`runs/<run>/batches/step-N.safetensors`
 * beside the store). Headers are read once per file (the rollout ids are in their metadata); tensors only for the
 * step that holds the asked rollout.
 */
export class TrainedRows {
  private readonly ids = new Map<string, { mtimeMs: number; ids: string[] }>();

  constructor(private readonly storeDir: string) {}

  /** The step that trained `rollout` and its batch rows, or null when no batch file of the run holds it. */
  find(run: string, rollout: string): { step: number; rows: BatchRow[] } | null {
    const dir = join(this.storeDir, 'runs', run, 'batches');
    let files: string[];
    try {
      files = readdirSync(dir).filter((f) => /^step-\d+\.safetensors$/.test(f));
    } catch {
      return null;
    }
    const step = (f: string) => Number(/\d+/.exec(f)![0]);
    for (const file of files.sort((a, b) => step(a) - step(b))) {
      // A file being written, or cut short by a crash, is skipped: it cannot say what was trained.
      try {
        const at = this.rolloutsOf(join(dir, file)).indexOf(rollout);
        if (at !== -1) return { step: step(file), rows: batchRows(join(dir, file), at) };
      } catch {}
    }
    return null;
  }

  private rolloutsOf(path: string): string[] {
    const { mtimeMs } = statSync(path);
    const known = this.ids.get(path);
    if (known?.mtimeMs === mtimeMs) return known.ids;
    const meta = JSON.parse(readSafetensorsMetadata(path).alight ?? '{}') as { rollouts?: { rollout_id: string }[] };
    const ids = (meta.rollouts ?? []).map((r) => r.rollout_id);
    this.ids.set(path, { mtimeMs, ids });
    return ids;
  }
}

/** The rows of the batch's `index`-th rollout. */
function batchRows(path: string, index: number): BatchRow[] {
  const t = readSafetensors(path).tensors;
  const [owner, offsets, prompts] = [t.rollout_index as Int32Array, t.row_offsets as BigInt64Array, t.prompt_lengths];
  const rows: BatchRow[] = [];
  owner.forEach((r, b) => {
    if (r !== index) return;
    const [from, to] = [Number(offsets[b]), Number(offsets[b + 1])];
    rows.push({
      tokens: (t.input_ids as Int32Array).subarray(from, to),
      promptLength: (prompts as Int32Array)[b],
      mask: (t.loss_mask as Uint8Array).subarray(from, to),
      advantages: (t.advantages as Float32Array).subarray(from, to),
      weights: (t.loss_weights as Float32Array).subarray(from, to),
    });
  });
  return rows;
}
