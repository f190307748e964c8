import { scaffold, type Template } from '../src/scaffold.js';
import { renderInit } from '../src/ui/next-steps.js';

export async function init(dir: string, opts: { force?: boolean; template?: Template }): Promise<string[]> {
  const template = opts.template ?? 'basic';
  const written = scaffold(dir, template, opts.force);
  process.stdout.write(renderInit(written, template));
  return written;
}
