import { availableParallelism } from 'node:os';
import { basename } from 'node:path';
import { AlightError, ExitCode } from '../src/errors.js';
import { Engine } from '../src/serve/engine.js';
import { resolveModel } from '../src/serve/models.js';
import { startModelServer } from '../src/serve/server.js';
import { Weights } from '../src/serve/weights.js';
import { printJson } from './shared.js';
import type { ServeFlags } from './table/declared-serve.js';

/** Serves a GGUF model until SIGTERM or SIGINT. */
export async function serveCommand(flags: ServeFlags): Promise<void> {
  const log = (line: string): void => {
    process.stderr.write(`alight serve: ${line}\n`);
  };
  const adminKey = process.env.ALIGHT_ADMIN_KEY || undefined;
  if (adminKey && adminKey.length < 16)
    throw new AlightError('ALIGHT_ADMIN_KEY must have at least 16 characters', ExitCode.usage);
  const modelPath = await resolveModel(flags.model, log);
  const started = performance.now();
  const load = (path: string): Promise<Engine> =>
    Engine.load({
      modelPath: path,
      contextSize: flags.ctx,
      parallel: flags.parallel,
      threads: flags.threads ?? availableParallelism(),
    });
  const weights = new Weights(await load(modelPath), 0, load);
  const modelName = flags.name ?? basename(modelPath).replace(/\.gguf$/, '');
  const server = await startModelServer({ weights, modelName, host: flags.host, port: flags.port, adminKey });
  const info = {
    url: `${server.url}/v1`,
    model: modelName,
    path: modelPath,
    load_ms: Math.round(performance.now() - started),
  };
  if (flags.json) printJson(info);
  else process.stdout.write(`alight serve: ${modelName} on ${info.url} (loaded in ${info.load_ms} ms)\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    // Started by `record --serve`, SIGINT (the terminal's Ctrl-C) is the parent's to act on; it sends SIGTERM.
    if (process.env.ALIGHT_SERVE_MANAGED) process.on('SIGINT', () => {});
    else process.once('SIGINT', resolve);
  });
  await server.close();
}
