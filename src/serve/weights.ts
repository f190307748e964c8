import { errorMessage } from '../errors.js';
import type { Engine } from './engine.js';

interface Loaded {
  engine: Engine;
  version: number;
  users: number;
  retired: boolean;
  gone?: Promise<void>;
  release?: () => void;
}

/**
 * The engine that serves new requests, and older ones still finishing theirs. A reload loads the new weights
 * beside the old, switches new requests to them, and disposes of the old engine once its last request ends.
 */
export class Weights {
  private current: Loaded;
  private reloading: Promise<unknown> = Promise.resolve();
  private readonly retiring = new Set<Promise<void>>();

  constructor(
    engine: Engine,
    version: number,
    private readonly load: (path: string) => Promise<Engine>,
  ) {
    this.current = { engine, version, users: 0, retired: false };
  }

  get engine(): Engine {
    return this.current.engine;
  }

  /** Runs `work` on the current weights, which stay loaded until it ends. */
  async use<T>(work: (engine: Engine, version: number) => Promise<T>): Promise<T> {
    const loaded = this.current;
    loaded.users++;
    try {
      return await work(loaded.engine, loaded.version);
    } finally {
      loaded.users--;
      this.disposeIfIdle(loaded);
    }
  }

  /** Loads `path` as `version`; reloads run one at a time, and a failed one leaves the current weights serving. */
  reload(path: string, version: number): Promise<void> {
    const next = this.reloading.then(async () => {
      const engine = await this.load(path);
      const old = this.current;
      this.current = { engine, version, users: 0, retired: false };
      // Not awaited: the reload has succeeded whether or not freeing the old weights goes well.
      void this.retire(old);
    });
    this.reloading = next.catch(() => {});
    return next;
  }

  /** Disposes of every engine once the requests using it have ended (the server aborts them first). */
  async close(): Promise<void> {
    await this.reloading;
    await Promise.all([this.retire(this.current), ...this.retiring]);
  }

  private retire(loaded: Loaded): Promise<void> {
    if (loaded.gone) return loaded.gone;
    loaded.retired = true;
    const gone = new Promise<void>((resolve) => {
      loaded.release = resolve;
    });
    loaded.gone = gone;
    this.retiring.add(gone);
    void gone.then(() => this.retiring.delete(gone));
    this.disposeIfIdle(loaded);
    return gone;
  }

  private disposeIfIdle(loaded: Loaded): void {
    const release = loaded.release;
    if (!loaded.retired || loaded.users > 0 || !release) return;
    loaded.release = undefined;
    loaded.engine
      .close()
      .catch((err) =>
        process.stderr.write(
          `alight serve: freeing the weights of version ${loaded.version} failed: ${errorMessage(err)}\n`,
        ),
      )
      .finally(release);
  }
}
