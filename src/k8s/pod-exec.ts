import type { Readable, Writable } from 'node:stream';
import { Exec, type V1Status } from '@kubernetes/client-node';
import { apiMessage, type Cluster } from './cluster.js';

export interface ExecResult {
  /** The command's exit code, when it exited. */
  exitCode: number | null;
  /** Why there is none: `timeout`, or the API's words (no such container, the connection lost). */
  reason: string | null;
}

export interface ExecIo {
  stdin?: Readable;
  stdout?: Writable;
  stderr?: Writable;
  /** Closes the connection after this long; the process is left for the pod's deletion to end. */
  timeoutMs?: number;
}

/**
 * A command in a running container, over the API server's exec websocket (v5.channel.k8s.io on Kubernetes ≥ 1.30, so
 * the end of stdin reaches the command). Resolves once the connection closed and the output streams are flushed.
 */
export async function execIn(
  cluster: Cluster,
  pod: string,
  container: string,
  command: string[],
  io: ExecIo = {},
): Promise<ExecResult> {
  let status: V1Status | null = null;
  let timedOut = false;
  // A local file that cannot be written (a full disk) ends the exec with that reason, not an uncaught exception.
  const failed: { err: Error | null } = { err: null };
  for (const s of [io.stdout, io.stderr])
    s?.on('error', (err) => {
      failed.err ??= err;
    });
  const ws = await new Exec(cluster.kc)
    .exec(
      cluster.namespace,
      pod,
      container,
      command,
      io.stdout ?? null,
      io.stderr ?? null,
      io.stdin ?? null,
      false,
      (s) => {
        status = s;
      },
    )
    .catch((err: unknown) => new Error(wsMessage(err)));
  if (ws instanceof Error) {
    await Promise.all([io.stdout, io.stderr].map((s) => s && flushed(s)));
    io.stdin?.destroy();
    return { exitCode: null, reason: `exec in ${pod}: ${ws.message}` };
  }
  for (const s of [io.stdout, io.stderr]) s?.on('error', () => ws.close());
  const closed = new Promise<string | null>((resolve) => {
    ws.on('error', (err) => resolve(err.message));
    ws.on('close', () => resolve(null));
  });
  const timer = io.timeoutMs
    ? setTimeout(() => {
        timedOut = true;
        ws.close();
      }, io.timeoutMs)
    : null;
  const lost = await closed;
  if (timer) clearTimeout(timer);
  // The library ends the output streams on the status message; a connection lost before it ends them here.
  await Promise.all([io.stdout, io.stderr].map((s) => s && flushed(s)));
  if (timedOut) return { exitCode: null, reason: 'timeout' };
  if (failed.err) return { exitCode: null, reason: `writing the output of ${command[0]}: ${failed.err.message}` };
  return resultOf(status, lost);
}

// The websocket's refusal is an ErrorEvent (its message says the HTTP status), not an API exception.
const wsMessage = (err: unknown): string =>
  typeof (err as { message?: unknown })?.message === 'string' ? (err as { message: string }).message : apiMessage(err);

function flushed(s: Writable): Promise<void> {
  if (s.writableFinished) return Promise.resolve();
  return new Promise((resolve) => {
    s.once('finish', resolve);
    s.once('error', () => resolve());
    s.end();
  });
}

/** The exit code in the API's status: Success, or NonZeroExitCode with the code as a cause. */
function resultOf(status: V1Status | null, lost: string | null): ExecResult {
  if (!status)
    return { exitCode: null, reason: `the exec connection closed without a status${lost ? `: ${lost}` : ''}` };
  if (status.status === 'Success') return { exitCode: 0, reason: null };
  const code = status.details?.causes?.find((c) => c.reason === 'ExitCode')?.message;
  if (status.reason === 'NonZeroExitCode' && code !== undefined) return { exitCode: Number(code), reason: null };
  return { exitCode: null, reason: status.message ?? status.reason ?? 'the exec failed' };
}
