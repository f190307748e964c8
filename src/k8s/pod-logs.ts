import { createWriteStream, writeFileSync } from 'node:fs';
import { PassThrough, type Writable } from 'node:stream';
import { Log } from '@kubernetes/client-node';
import type { ProcessOutput } from '../runner/process.js';
import type { Cluster } from './cluster.js';

/**
 * A pod's output, where the runner wants a harness's: followed live from when its container starts, then, once it
 * ended, read whole and written again, so that a follow cut short (the API server restarted) loses nothing. The
 * Kubernetes log API joins stdout and stderr: both go to the stdout file; the stderr file gets alight's notes on the pod
 * and, last, the log's last line (what a failure's message quotes).
 */
export class PodLogs {
  private follow: { abort: AbortController | null; ended: Promise<void> } | null = null;

  constructor(
    private readonly cluster: Cluster,
    private readonly output: ProcessOutput,
  ) {}

  /** Starts following the pod's container (once). */
  start(pod: string, container: string): void {
    if (this.follow) return;
    const sink = new PassThrough();
    const dest: Writable =
      typeof this.output === 'string'
        ? this.output === 'inherit'
          ? process.stdout
          : process.stderr
        : createWriteStream(this.output.stdout, { flags: 'a' });
    sink.pipe(dest, { end: typeof this.output !== 'string' });
    const ended = new Promise<void>((resolve) => {
      sink.once('end', resolve);
      sink.once('error', () => resolve());
    });
    const follow: { abort: AbortController | null; ended: Promise<void> } = { abort: null, ended };
    this.follow = follow;
    new Log(this.cluster.kc)
      .log(this.cluster.namespace, pod, container, sink, { follow: true })
      .then((abort) => {
        follow.abort = abort;
      })
      .catch(() => sink.end());
  }

  /**
   * Once the container ended: waits (up to 5 s) for the follow to drain, then writes the whole log and the notes.
   * `notes` are alight's lines on what happened to the pod (null pod: it never ran).
   */
  async finish(pod: string | null, container: string, notes: string[]): Promise<void> {
    if (this.follow) {
      await Promise.race([this.follow.ended, new Promise((r) => setTimeout(r, 5000))]);
      this.follow.abort?.abort();
    }
    if (typeof this.output === 'string') {
      for (const note of notes) process.stderr.write(`alight: ${note}\n`);
      return;
    }
    let text = '';
    if (pod) {
      text = await this.cluster.core
        .readNamespacedPodLog({ namespace: this.cluster.namespace, name: pod, container })
        .catch(() => '');
      if (text) writeFileSync(this.output.stdout, text);
    }
    const last = text.trimEnd().split('\n').pop() ?? '';
    writeFileSync(
      this.output.stderr,
      [...notes.map((n) => `alight: ${n}`), ...(last ? [last.slice(0, 300)] : [])].join('\n') + '\n',
    );
  }

  /** Stops following (Ctrl-C). */
  stop(): void {
    this.follow?.abort?.abort();
  }
}
