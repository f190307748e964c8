import type { Engine } from './engine.js';

interface Loaded { engine: Engine; version: number; users: number; retired: boolean }

/**
 * The engine that serves new requests, and older ones still finishing theirs. A reload loads the new weights
 * beside the old, switches new requests to them, and disposes of the old engine once its last request ends.
 */
export class Weights {
  private current: Loaded;
  private reloading: Promise<unknown> = Promise.resolve();

  constructor(engine: Engine, version: number, private readonly load: (path: string) => Promise<Engine>) {
    this.current = { engine, version, users: 0, retired: false };
  }

  get engine(): Engine {
    return this.current.engine;
  }

  get version(): number {
    return this.current.version;
  }

  /** Runs `work` on the current weights, which stay loaded until it ends. */
  async use<T>(work: (engine: Engine, version: number) => Promise<T>): Promise<T> {
    const loaded = this.current;
    loaded.users++;
    try {
      return await work(loaded.engine, loaded.version);
    } finally {
      loaded.users--;
      if (loaded.retired && loaded.users === 0) await loaded.engine.close();
    }
  }

  /** Loads `path` as `version`; reloads run one at a time. */
  reload(path: string, version: number): Promise<void> {
    const next = this.reloading.then(async () => {
      const engine = await this.load(path);
      const old = this.current;
      this.current = { engine, version, users: 0, retired: false };
      old.retired = true;
      if (old.users === 0) await old.engine.close();
    });
    this.reloading = next.catch(() => {});
    return next;
  }

  async close(): Promise<void> {
    await this.reloading;
    await this.current.engine.close();
  }
}
