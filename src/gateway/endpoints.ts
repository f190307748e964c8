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

/** The upstream registry: calls go round-robin over the registered endpoints. */
export class Endpoints {
  private readonly list: Endpoint[] = [];
  private next = 0;

  upsert(endpoint: Endpoint): Endpoint {
    const url = endpoint.url.replace(/\/+$/, '');
    const entry = { ...endpoint, url };
    const i = this.list.findIndex((e) => e.url === url);
    if (i === -1) this.list.push(entry);
    else this.list[i] = entry;
    return entry;
  }

  /** Puts `endpoint` in the place of the one at `url` (a restarted engine listens elsewhere). */
  replace(url: string, endpoint: Endpoint): Endpoint {
    const i = this.list.findIndex((e) => e.url === url.replace(/\/+$/, ''));
    if (i !== -1) this.list.splice(i, 1);
    return this.upsert(endpoint);
  }

  pick(): Endpoint {
    if (this.list.length === 0) throw new HttpError(503, 'no upstream endpoint is registered (POST /api/endpoints)', 'upstream_error');
    return this.list[this.next++ % this.list.length];
  }

  all(): readonly Endpoint[] {
    return this.list;
  }
}
