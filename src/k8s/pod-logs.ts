import { createWriteStream, existsSync, statSync, writeFileSync } from 'node:fs';
import { PassThrough, type Writable } from 'node:stream';
import { Log } from '@kubernetes/client-node';
import type { ProcessOutput } from '../runner/launcher.js';
import type { Cluster } from './cluster.js';

/**
 * A pod's output, where the runner wants a harness's: followed live from when its container starts, and read whole
 * again once it ended if the follow was cut short (the API server restarted). The
 * Kubernetes log API joins stdout and stderr: both go to the stdout file; the stderr file gets alight's notes on the pod
 * and, last, the log's last line (what a failure's message quotes).
 */
export class PodLogs {
  private follow: { abort: AbortController | null; ended: Promise<boolean>; sink: PassThrough } | null = null;

  constructor(
    private readonly cluster: Cluster,
    private readonly output: ProcessOutput,
  ) {}

  /** Starts following the pod's container (once). */
  start(pod: string, container: string): void {
    if (this.follow) return;
    const sink = new PassThrough();
    const toFile = typeof this.output !== 'string';
    const dest: Writable =
      typeof this.output === 'string'
        ? this.output === 'inherit'
          ? process.stdout
          : process.stderr
        : createWriteStream(this.output.stdout, { flags: 'a' });
    sink.pipe(dest, { end: toFile });
    // True once everything followed is in the file: the stream ended cleanly and the file has it all.
    const ended = new Promise<boolean>((resolve) => {
      sink.once('error', () => resolve(false));
      sink.once('end', () => (toFile ? dest.once('finish', () => resolve(true)) : resolve(true)));
    });
    const follow: { abort: AbortController | null; ended: Promise<boolean>; sink: PassThrough } = {
      abort: null,
      ended,
      sink,
    };
    this.follow = follow;
    new Log(this.cluster.kc)
      .log(this.cluster.namespace, pod, container, sink, { follow: true })
      .then((abort) => {
        follow.abort = abort;
      })
      .catch(() => sink.destroy(new Error('the log follow failed')));
  }

  /**
   * Once the container ended: waits (up to 5 s) for the follow to drain; if it did not end cleanly (the API server
   * restarted under it), the log is read whole and written again. The kubelet keeps only the current log file (10 MiB
   * by default), so a clean follow, which has it all, is never replaced. Then the notes: alight's lines on what
   * happened to the pod (null pod: it never ran).
   */
  async finish(pod: string | null, container: string, notes: string[]): Promise<void> {
    const clean = this.follow ? await Promise.race([this.follow.ended, delay(5000, false)]) : false;
    this.stop();
    if (typeof this.output === 'string') {
      for (const note of notes) process.stderr.write(`alight: ${note}\n`);
      return;
    }
    let text = '';
    if (pod) {
      text = await this.cluster.core
        .readNamespacedPodLog({ namespace: this.cluster.namespace, name: pod, container })
        .catch(() => '');
      // A follow that ended early but quietly (a proxy's timeout) has less than the kubelet: the longer one wins.
      if (text && (!clean || Buffer.byteLength(text) > sizeOf(this.output.stdout)))
        writeFileSync(this.output.stdout, text);
    }
    const last = text.trimEnd().split('\n').pop() ?? '';
    const lines = [...notes.map((n) => `alight: ${n}`), ...(last ? [last.slice(0, 300)] : [])];
    writeFileSync(this.output.stderr, `${lines.join('\n')}\n`);
  }

  /** Stops following (Ctrl-C, the end): the request aborted and the stream ended, so that the file is closed. */
  stop(): void {
    this.follow?.abort?.abort();
    this.follow?.sink.end();
  }
}

const sizeOf = (path: string): number => (existsSync(path) ? statSync(path).size : 0);
const delay = <T>(ms: number, value: T): Promise<T> => new Promise((r) => setTimeout(() => r(value), ms));
