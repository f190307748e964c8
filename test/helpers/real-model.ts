import { cpSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { alight } from './cli.js';
import { place } from './place.js';

/**
 * SmolLM2-135M-Instruct as `alight models convert` writes it, once per temp root (the suite's run): converting it is
 * ~35 s of dequantising, and two files need it (models-convert, which checks the conversion, shares its own; the
 * real-model training test reads it). Read it, never write into it.
 */
const shared = (): string => join(tmpdir(), 'alight-smollm2-135m-instruct');

/** Offers a conversion made elsewhere (the models-convert test's) to the files after it. */
export function shareSmolLM2(folder: string): void {
  if (existsSync(shared())) return;
  const building = `${shared()}.${process.pid}`;
  cpSync(folder, building, { recursive: true });
  place(building, shared());
}

/** The shared conversion, made now if no file made it before. */
export async function smolLM2(): Promise<string> {
  if (existsSync(shared())) return shared();
  const building = `${shared()}.${process.pid}`;
  const res = await alight(['models', 'convert', 'smollm2-135m-instruct', '--out', building], { timeoutMs: 900_000 });
  if (res.code !== 0) throw new Error(`alight models convert failed (${res.code}):\n${res.stderr}`);
  place(building, shared());
  return shared();
}
