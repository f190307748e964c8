import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AlightError, ExitCode } from '../errors.js';
import type { SetupListener } from '../setup/events.js';
import { ensurePythonEnv } from '../setup/python-env.js';
import { Worker } from '../worker/client.js';
import { servingSettings } from '../worker/settings.js';
import type { ManagedServe } from './managed.js';

// A model load on a loaded 2-core machine takes seconds; a first Python set-up is ensured before the clock starts.
const loadTimeoutMs = 600_000;

/**
 * A Hugging Face model folder (a checkpoint of `alight sft` or `train`, a converted model) served by alight's torch
 * worker for a run (`--serve-worker`): the engine training samples from, so a checkpoint is evaluated as it was trained,
 * tool calls included where its chat template writes them (python/alight_worker/tool_calls.py).
 */
export async function startWorkerServe(
  folder: string,
  o: { logFile: string; setup: SetupListener },
): Promise<ManagedServe> {
  if (!existsSync(join(folder, 'config.json')))
    throw new AlightError(
      `--serve-worker: ${folder} is not a Hugging Face model folder (no config.json); an adapter checkpoint: ` +
        'merge it into its base first (alight models merge)',
      ExitCode.usage,
    );
  const python = await ensurePythonEnv(o.setup);
  const worker = Worker.start({ python, logFile: o.logFile });
  try {
    const init = await worker.call('init', servingSettings(folder), loadTimeoutMs);
    return { ...init.endpoints[0], stop: () => worker.stop() };
  } catch (err) {
    await worker.stop();
    throw err;
  }
}
