import { Agent, request } from 'undici';

/** What one load phase measured: requests done and failed, its wall time, and client-observed latencies. */
export interface Phase {
  done: number;
  errors: number;
  seconds: number;
  whole: number[];
  stream: number[];
}

export type Streams = 'half' | 'none' | 'all';

export interface LoadSpec {
  urlOf(client: number): string;
  clients: number;
  total: number;
  limitMs: number;
  /** The body of a client's next request. */
  bodyOf(client: number, stream: boolean): string;
  /** Which requests stream: `none` (a server that refuses streams), `all`, or `half` (the default, as below). */
  streams?: Streams;
  /** Whether an answer's text is whole (its protocol's last event, its token fields). */
  complete(text: string, stream: boolean): boolean;
}

/**
 * `clients` loops, each sending its next request as soon as the previous answer's last byte arrived; with many
 * clients odd ones stream, with one client every other request does.
 */
export async function loadPhase(spec: LoadSpec): Promise<Phase> {
  const dispatcher = new Agent({ keepAliveTimeout: 60_000, connections: spec.clients });
  const phase: Phase = { done: 0, errors: 0, seconds: 0, whole: [], stream: [] };
  const deadline = Date.now() + spec.limitMs;
  let issued = 0;
  const client = async (c: number): Promise<void> => {
    while (issued < spec.total && Date.now() < deadline) {
      const n = issued++;
      const half = spec.clients > 1 ? c % 2 === 1 : n % 2 === 1;
      const stream = spec.streams === 'all' || (spec.streams !== 'none' && half);
      const body = spec.bodyOf(c, stream);
      const started = performance.now();
      try {
        const res = await request(spec.urlOf(c), {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
          dispatcher,
        });
        const text = await res.body.text();
        const ms = performance.now() - started;
        if (res.statusCode !== 200 || !spec.complete(text, stream))
          throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
        (stream ? phase.stream : phase.whole).push(ms);
        phase.done++;
      } catch (err) {
        if (phase.errors++ === 0) console.error(`  first error: ${String(err)}`);
      }
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: spec.clients }, (_, c) => client(c)));
  phase.seconds = (performance.now() - started) / 1000;
  await dispatcher.close();
  return phase;
}
