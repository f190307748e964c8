import { type KubeConfig, type KubernetesObject, Watch } from '@kubernetes/client-node';
import { errorMessage } from '../errors.js';
import { withRetries } from './cluster.js';

export interface ListResult<T> {
  items: T[];
  metadata?: { resourceVersion?: string };
}

/**
 * A live copy of the objects one label selector matches (a run's Jobs, or their pods): listed, then watched from the
 * list's resourceVersion. A dropped watch or an error event (410 Gone: the server no longer has that version) lists
 * again and watches from the new list. Every `relistMs` the watch is ended on purpose and the same happens, which
 * catches anything a watch missed and a watch stuck on a dead connection; a list never runs beside a live watch, whose
 * newer events an older list would undo. `onChange` gets each key that changed; a deleted object's key maps to
 * undefined.
 */
export class Mirror<T extends KubernetesObject> {
  readonly objects = new Map<string, T>();
  private version = '';
  private stopped = false;
  private abort: AbortController | null = null;
  private timer: NodeJS.Timeout | null = null;
  private cycling = false;

  constructor(
    private readonly kc: KubeConfig,
    private readonly path: string,
    private readonly selector: string,
    private readonly list: () => Promise<ListResult<T>>,
    private readonly keyOf: (o: T) => string | undefined,
    private readonly onChange: (key: string) => void,
    private readonly relistMs = 15_000,
    private readonly onProblem: (message: string) => void = () => {},
  ) {}

  async start(): Promise<void> {
    await this.relist();
    this.watch();
    this.timer = setInterval(() => {
      this.cycling = true;
      this.abort?.abort();
    }, this.relistMs);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    this.abort?.abort();
    if (this.timer) clearInterval(this.timer);
  }

  /** Replaces the copy with a fresh list, telling what changed or went. */
  async relist(): Promise<void> {
    const result = await withRetries(this.list);
    const seen = new Set<string>();
    for (const item of result.items) {
      const key = this.keyOf(item);
      if (!key) continue;
      seen.add(key);
      this.put(key, item);
    }
    for (const key of [...this.objects.keys()].filter((k) => !seen.has(k))) {
      this.objects.delete(key);
      this.onChange(key);
    }
    this.version = result.metadata?.resourceVersion ?? this.version;
  }

  private put(key: string, item: T): void {
    const old = this.objects.get(key);
    if (old?.metadata?.resourceVersion === item.metadata?.resourceVersion) return;
    this.objects.set(key, item);
    this.onChange(key);
  }

  private watch(): void {
    if (this.stopped) return;
    const query = { labelSelector: this.selector, resourceVersion: this.version, allowWatchBookmarks: true };
    let failed = false;
    const event = (type: string, obj: T): void => {
      if (type === 'ERROR') {
        failed = true;
        return;
      }
      this.version = obj.metadata?.resourceVersion ?? this.version;
      if (type === 'BOOKMARK') return;
      const key = this.keyOf(obj);
      if (!key) return;
      if (type === 'DELETED') {
        this.objects.delete(key);
        this.onChange(key);
      } else this.put(key, obj);
    };
    const done = (err: unknown): void => {
      if (this.stopped) return;
      const planned = this.cycling;
      this.cycling = false;
      this.abort = null;
      if (err && !planned) this.onProblem(`watch of ${this.path} dropped (${errorMessage(err)}); resuming`);
      // The server's own timeout, or our planned end: again at once. An error (the server restarting): after a second.
      const troubled = (failed || Boolean(err)) && !planned;
      setTimeout(() => void this.resume(troubled || planned), troubled ? 1000 : 0).unref();
    };
    new Watch(this.kc).watch(this.path, query, event, done).then(
      (a) => {
        this.abort = a;
        if (this.stopped) a.abort();
      },
      // Credentials that could not be had (an exec plugin failing) reject before the request: a dropped watch too.
      (err) => done(err),
    );
  }

  private async resume(relist: boolean): Promise<void> {
    if (relist) {
      try {
        await this.relist();
      } catch {
        /* the periodic list and the next resume try again */
      }
    }
    this.watch();
  }
}
