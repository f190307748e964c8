import type { UpstreamKind } from '../config/schema.js';
import { HttpError } from '../http.js';

export interface Endpoint {
  url: string;
  /** Sent upstream in place of whatever model the harness named; null passes the harness's name through. */
  model: string | null;
  kind: UpstreamKind;
  /** Weights version; every recorded call carries the version of the endpoint that served it. */
  version: number;
}

/**
 * The upstream registry. A rollout's calls stay on one endpoint (chosen by its id), so a multi-turn harness finds its
 * history in that engine's prefix cache; rollouts spread evenly over the endpoints.
 */
export class Endpoints {
  private readonly list: Endpoint[] = [];

  upsert(endpoint: Endpoint): Endpoint {
    const url = endpoint.url.replace(/\/+$/, '');
    const entry = { ...endpoint, url };
    const i = this.list.findIndex((e) => e.url === url);
    if (i === -1) this.list.push(entry);
    else this.list[i] = entry;
    return entry;
  }

  /** Puts these endpoints in the place of all others (a restarted engine listens elsewhere). */
  replaceAll(endpoints: Endpoint[]): void {
    this.list.length = 0;
    for (const e of endpoints) this.upsert(e);
  }

  /** The endpoint for a rollout's call: the same for every call of the rollout (while the registry is unchanged). */
  pick(rolloutId: string): Endpoint {
    if (this.list.length === 0)
      throw new HttpError(503, 'no upstream endpoint is registered (POST /api/endpoints)', 'upstream_error');
    let hash = 0;
    for (let i = 0; i < rolloutId.length; i++) hash = (Math.imul(hash, 31) + rolloutId.charCodeAt(i)) >>> 0;
    return this.list[hash % this.list.length];
  }

  all(): readonly Endpoint[] {
    return this.list;
  }
}
