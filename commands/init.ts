import { scaffold } from '../src/scaffold.js';
import { renderInit } from '../src/ui/next-steps.js';
import type { InitFlags } from './table/declared-setup.js';

export async function init(dir: string, opts: InitFlags): Promise<string[]> {
  const { template } = opts;
  const written = scaffold(dir, template, opts.force);
  process.stdout.write(renderInit(written, template));
  return written;
}
