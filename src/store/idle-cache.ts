/**
 * Per-rollout state kept in memory while a rollout is live, bounded: at most `max` rollouts, each dropped after
 * `idleMs` without use, the least recently used first. An orchestrator that dies without ending its rollouts must not
 * grow the gateway without bound; what is dropped is only a cache (see its users for what losing it costs).
 */
/** The gateway's defaults (gateway.cacheRollouts, gateway.cacheIdleS). */
export const defaultCache = { rollouts: 512, idleS: 1800 };

export class IdleCache<V> {
  private readonly entries = new Map<string, { value: V; used: number }>();

  constructor(
    private readonly max: number,
    private readonly idleMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    // Map order is use order: the first entries are the least recently used.
    this.entries.delete(key);
    entry.used = this.now();
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, { value, used: this.now() });
    const stale = this.now() - this.idleMs;
    for (const [k, e] of this.entries) {
      if (this.entries.size <= this.max && e.used >= stale) break;
      this.entries.delete(k);
    }
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}
