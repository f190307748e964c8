import { AlightError, ExitCode } from '../errors.js';

type Backend = 'torch' | 'verl';
interface Asked {
  backend?: Backend;
  gpus?: number;
  nodes?: number;
  rayAddress?: string;
  tensorParallel?: number;
}

/**
 * The backend the flags ask for. More than one GPU means verl (the torch worker trains on one device), so `--gpus 8`
 * alone chooses it; a flag that only verl reads, given with `--backend torch`, is refused rather than ignored.
 */
export function backendFor(asked: Asked): Backend | undefined {
  const verlOnly = [
    asked.gpus !== undefined && asked.gpus > 1 && `--gpus ${asked.gpus}`,
    asked.nodes !== undefined && asked.nodes > 1 && `--nodes ${asked.nodes}`,
    asked.rayAddress !== undefined && '--ray-address',
    asked.tensorParallel !== undefined && '--tensor-parallel',
  ].filter((f): f is string => Boolean(f));
  if (asked.backend === 'torch' && verlOnly.length) {
    throw new AlightError(
      `${verlOnly.join(', ')}: the torch backend trains on one device; use --backend verl (or leave --backend out)`,
      ExitCode.usage,
    );
  }
  return asked.backend ?? (verlOnly.length ? 'verl' : undefined);
}
