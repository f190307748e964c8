import type { ServerResponse } from 'node:http';
import { finished, type Readable, type Writable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { errorMessage } from '../errors.js';
import { HttpError, sendJson } from '../http.js';
import type { CallStatus } from '../store/calls.js';
import type { Endpoint } from './endpoints.js';
import type { Extracted, HarnessView, Protocol, StreamAssembler } from './protocols/index.js';
import { type PromptIdsHint, type ReadMode, readAnswer, type ScannedAnswer } from './protocols/token-fields.js';
import { kept, refusal } from './protocols/tokens.js';
import { type SseEvent, SseSplitter } from './sse.js';
import { readWhole, type UpstreamClient, UpstreamStatusError, versionOf } from './upstream.js';

export interface Outcome {
  status: CallStatus;
  httpStatus: number | null;
  error: string | null;
  extracted: Extracted | null;
  /** The weights version the upstream reported, when it reports one. */
  version?: number | null;
  /**
   * Why the answer's token values cannot be recorded as they are (token-types.ts): the harness gets its answer, the
   * call is recorded as an error without them.
   */
  refused?: string | null;
  /** Sends what is left to the harness; runs after the call is stored, so a call the harness saw end is never lost. */
  reply(): void;
}

/** One upstream call as the relay needs it. */
export interface Relayed {
  upstream: UpstreamClient;
  endpoint: Endpoint;
  protocol: Protocol;
  path: string;
  payload: string | Buffer;
  signal: AbortSignal;
  res: ServerResponse;
  /** A fresh view per upstream attempt: views keep state across a stream's chunks, and a failed attempt is retried. */
  view(): HarnessView;
  /** The rollout's last prompt ids, which the scanner reads the answer's against (scan mode only). */
  promptHint?: PromptIdsHint;
}

class MidStreamError extends Error {}

const sseHeaders = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' };

export async function wholeCall(c: Relayed): Promise<Outcome> {
  let answer: Awaited<ReturnType<typeof readWhole>>;
  try {
    answer = await c.upstream.post(c.endpoint, c.path, c.payload, c.signal, readWhole);
  } catch (err) {
    return failed(c, err);
  }
  let read: ScannedAnswer;
  let body: Buffer | string;
  try {
    read = readAnswer(answer.bytes, readMode(c), c.promptHint);
    body = c.view().whole(read) ?? answer.bytes;
  } catch {
    return errorOutcome(c, 502, `the upstream answered with invalid JSON: ${answer.text.slice(0, 200)}`);
  }
  const { refused } = read.tokens;
  return {
    status: 'ok',
    httpStatus: answer.status,
    error: null,
    extracted: kept(c.protocol.extract(read), refused),
    version: answer.version,
    refused: refusal(refused),
    reply: () =>
      c.res
        .writeHead(answer.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
        .end(body),
  };
}

/** How the call's answers are read: token fields scanned from a vLLM upstream's bytes (token-fields.ts). */
export function readMode(c: Pick<Relayed, 'protocol' | 'endpoint'>): ReadMode {
  return !c.protocol.tokenFields ? 'raw' : c.endpoint.kind === 'vllm' ? 'scan' : 'parse';
}

export async function streamCall(c: Relayed): Promise<Outcome> {
  const stream = new StreamRelay(c);
  try {
    await c.upstream.post(c.endpoint, c.path, c.payload, c.signal, stream.relay);
  } catch (err) {
    if (!stream.relayed || c.signal.aborted) return failed(c, err, stream.extracted());
    const message = `the upstream failed mid-stream: ${errorMessage(err)}`;
    return streamBroken(c.res, stream.view, message, stream.extracted());
  }
  return stream.outcome();
}

/** One streamed call: relays each upstream attempt's events to the harness as they come, assembling the answer. */
class StreamRelay {
  readonly assembler: StreamAssembler;
  /** The harness's view of the current attempt. */
  view: HarnessView;
  /** Whether bytes reached the harness: before, a failed attempt may be retried; after, the stream is spoiled. */
  relayed = false;
  sawDone = false;
  upstreamError: string | null = null;
  /** The first reason a chunk's token values were refused. */
  refused: string | null = null;
  version: number | null = null;

  constructor(private readonly c: Relayed) {
    this.assembler = c.protocol.assembler();
    this.view = c.view();
  }

  /** Relays one upstream attempt (the retry loop calls it again for a retried one). */
  readonly relay = async (up: Dispatcher.ResponseData): Promise<void> => {
    const type = String(up.headers['content-type'] ?? '');
    if (up.statusCode >= 400 || !type.includes('text/event-stream')) await refuseNonStream(up, type);
    this.version = versionOf(up.headers);
    const splitter = new SseSplitter();
    this.view = this.c.view();
    const { res } = this.c;
    try {
      await eachChunk(up.body, res, (bytes) => {
        // Everything one read brought goes to the harness in one write: per-event writes cost more than parsing.
        const out = this.translate(splitter.push(bytes));
        if (!out) return true;
        if (!this.relayed) {
          res.writeHead(200, sseHeaders);
          this.relayed = true;
        }
        return res.write(out);
      });
    } catch (err) {
      if (!this.relayed) throw err;
      throw new MidStreamError(errorMessage(err));
    }
  };

  /**
   * The events of one read as the harness sees them; each chunk also goes to the assembler. `[DONE]` ends the stream
   * as the openai SDKs read it (data that starts with it; nothing after it counts).
   */
  private translate(events: SseEvent[]): string {
    let out = '';
    const mode = readMode(this.c);
    for (const event of events) {
      if (this.sawDone) break;
      if (event.data?.startsWith('[DONE]')) {
        this.sawDone = true;
        continue;
      }
      const chunk = event.data ? parseChunk(event.data, mode, this.c.promptHint) : null;
      this.refused ??= chunk?.tokens.refused ?? null;
      if (chunk?.body.error) this.upstreamError = errorText(chunk.body.error);
      else if (chunk) this.assembler.push(chunk);
      out += chunk ? this.view.event(event.raw, chunk) : event.raw;
    }
    return out;
  }

  /** The answer as assembled so far, as it is recorded. */
  extracted(): Extracted {
    return kept(this.assembler.result(), this.refused);
  }

  /** How the stream ended, once the upstream closed it. */
  outcome(): Outcome {
    const { res } = this.c;
    const { version } = this;
    if (this.upstreamError) {
      return {
        status: 'error',
        httpStatus: 200,
        error: this.upstreamError,
        extracted: this.extracted(),
        version,
        reply: () => res.end(),
      };
    }
    if (!this.sawDone && !this.assembler.finished()) {
      const message = 'the upstream ended the stream before the answer was finished';
      return streamBroken(res, this.view, message, this.extracted());
    }
    return {
      status: 'ok',
      httpStatus: 200,
      error: null,
      extracted: this.extracted(),
      version,
      refused: refusal(this.refused),
      reply: () => {
        if (!this.relayed) res.writeHead(200, sseHeaders);
        res.end(this.view.end(this.sawDone) || undefined);
      },
    };
  }
}

/**
 * Hands each chunk of `body` to `take` as it comes ('data' events: for-await makes a promise per chunk); while `take`'s
 * write waits for `out` to drain (it returned false) the body is paused. Ends as the body does: with its error, a
 * premature close (an aborted call), or the error `take` threw, for which the body is destroyed.
 */
function eachChunk(body: Readable, out: Writable, take: (bytes: Buffer) => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const resume = (): void => void body.resume();
    const onData = (bytes: Buffer): void => {
      // Chunks already buffered still come after a destroy: none is taken after a failure.
      if (body.destroyed) return;
      try {
        if (!take(bytes)) {
          body.pause();
          out.once('drain', resume);
        }
      } catch (err) {
        body.destroy(err as Error);
      }
    };
    finished(body, (err) => {
      body.off('data', onData);
      out.off('drain', resume);
      if (err) reject(err);
      else resolve();
    });
    body.on('data', onData);
  });
}

/** An attempt answered with an error status (thrown for the retry loop) or with something other than a stream. */
async function refuseNonStream(up: Dispatcher.ResponseData, type: string): Promise<never> {
  if (up.statusCode >= 400) await readWhole(up); // throws the status for the retry loop
  await up.body.dump();
  throw new HttpError(
    502,
    `the upstream answered a streaming request with ${type || 'no content type'}, not an event stream`,
    'upstream_error',
  );
}

function parseChunk(data: string, mode: ReadMode, hint: PromptIdsHint | undefined): ScannedAnswer {
  try {
    return readAnswer(data, mode, hint);
  } catch {
    /* reported below */
  }
  throw new HttpError(
    502,
    `the upstream sent an event that is not a JSON object: ${data.slice(0, 200)}`,
    'upstream_error',
  );
}

function errorText(error: unknown): string {
  const message = (error as { message?: unknown }).message;
  return `upstream error: ${typeof message === 'string' ? message : JSON.stringify(error)}`;
}

/** After bytes were relayed, an error can only travel as an event in the stream; the SDKs raise it as an API error. */
function streamBroken(res: ServerResponse, view: HarnessView, message: string, extracted: Extracted | null): Outcome {
  return { status: 'error', httpStatus: 502, error: message, extracted, reply: () => res.end(view.broken(message)) };
}

export function errorOutcome(
  c: Pick<Relayed, 'res' | 'protocol'>,
  status: number,
  message: string,
  extracted: Extracted | null = null,
): Outcome {
  return {
    status: 'error',
    httpStatus: status,
    error: message,
    extracted,
    reply: () =>
      sendJson(
        c.res,
        status,
        c.protocol.errorBody(status, message, status >= 500 ? 'upstream_error' : 'invalid_request_error'),
      ),
  };
}

/** An upstream's own error message, for a harness that speaks another protocol than the upstream. */
function upstreamMessage(body: string): string {
  try {
    const message = JSON.parse(body) as { error?: { message?: unknown }; message?: unknown };
    const text = message.error?.message ?? message.message;
    if (typeof text === 'string') return text;
  } catch {
    /* the raw text below */
  }
  return body.slice(0, 500);
}

function failed(c: Relayed, err: unknown, extracted: Extracted | null = null): Outcome {
  const { res, signal } = c;
  if (signal.aborted)
    return { status: 'error', httpStatus: null, error: errorMessage(signal.reason), extracted, reply: () => res.end() };
  if (err instanceof UpstreamStatusError) {
    const error = `upstream answered HTTP ${err.status}: ${err.body.slice(0, 500)}`;
    const headers = {
      'content-type': 'application/json',
      ...(err.retryAfterS !== null && { 'retry-after': String(err.retryAfterS) }),
    };
    // The upstream's error body is relayed as it is to a harness of its own protocol, else put in the harness's shape.
    const body = c.protocol.translated
      ? JSON.stringify(c.protocol.errorBody(err.status, upstreamMessage(err.body), 'upstream_error'))
      : err.body;
    return {
      status: 'error',
      httpStatus: err.status,
      error,
      extracted,
      reply: () => res.writeHead(err.status, headers).end(body),
    };
  }
  if (err instanceof HttpError) return errorOutcome(c, err.status, err.message, extracted);
  return errorOutcome(c, 502, `the upstream request failed: ${errorMessage(err)}`, extracted);
}
