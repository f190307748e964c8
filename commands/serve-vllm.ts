import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { loadConfig, resolveDb } from '../src/config/load.js';
import { startVllm } from '../src/serve/vllm.js';
import { renderVllmServing } from '../src/ui/next-steps.js';
import { printJson, withInterrupt } from './shared.js';
import type { ServeVllmFlags } from './table/declared-serve.js';

/**
 * `alight serve-vllm`: vLLM's OpenAI server on a model until Ctrl-C. Its API key goes to a file only the user can read
 * (for upstream.apiKeyEnv), never to the terminal or the log.
 */
export async function serveVllmCommand(model: string, flags: ServeVllmFlags) {
  const folder = dirname(resolve(resolveDb(flags.db, loadConfig(flags.config).config)));
  return withInterrupt(async (signal) => {
    const served = await startVllm({
      model,
      device: flags.device,
      toolCallParser: flags.toolCallParser,
      dtype: flags.dtype,
      logFile: join(folder, 'vllm.log'),
      port: flags.port,
      tensorParallel: flags.tensorParallel,
      gpuMemoryUtilization: flags.gpuMemoryUtilization,
      maxModelLen: flags.maxModelLen,
      signal,
    });
    const keyFile = join(folder, `vllm-${new URL(served.url).port}.key`);
    mkdirSync(folder, { recursive: true });
    writeFileSync(keyFile, `${served.apiKey}\n`, { mode: 0o600 });
    chmodSync(keyFile, 0o600);
    const info = { url: served.url, model: served.model, keyFile };
    if (flags.json) printJson(info);
    else process.stdout.write(renderVllmServing(info));
    await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
    await served.stop();
    return info;
  });
}
