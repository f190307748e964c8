/**
 * A second baseline for the gateway benchmark: a straightforward recorder. It reads each request and answer whole,
 * parses both with JSON.parse (a stream: each event), and stores one SQLite row per call (the newest message, the
 * prompt and completion ids and the logprobs) before the harness sees the answer end. No history sharing, rollouts,
 * views, retries or group commits: to put the gateway's cost in scale. Not a lower bound: it parses the whole request
 * (a recorder must read it, if not all of it), commits each call alone, and runs under tsx (~2%, see server.ts).
 */

import { rmSync } from 'node:fs';
import { Agent, createServer, type IncomingMessage, request } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { listenLocal } from './listen.js';

type Answer = { prompt: number[]; ids: number[]; logprobs: number[] };
type Event = {
  prompt_token_ids?: number[];
  choices: { token_ids?: number[]; logprobs?: { content: { logprob: number }[] } }[];
};

function read(stream: IncomingMessage, done: (bytes: Buffer) => void, each?: (chunk: Buffer) => void): void {
  const parts: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => {
    parts.push(chunk);
    each?.(chunk);
  });
  stream.on('end', () => done(parts.length === 1 ? parts[0] : Buffer.concat(parts)));
}

/** The token values of a whole answer, or of a stream's events together. */
function tokensOf(text: string, stream: boolean): Answer {
  const out: Answer = { prompt: [], ids: [], logprobs: [] };
  const events = stream ? text.split('\n\n').filter((e) => e.startsWith('data: {')) : [text];
  for (const event of events) {
    const e = JSON.parse(stream ? event.slice(6) : event) as Event;
    if (e.prompt_token_ids) out.prompt = e.prompt_token_ids;
    for (const c of e.choices) {
      if (c.token_ids) out.ids.push(...c.token_ids);
      for (const t of c.logprobs?.content ?? []) out.logprobs.push(t.logprob);
    }
  }
  return out;
}

const blob = (a: Int32Array | Float64Array): Buffer => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

export async function naiveRecorder(target: string, dir: string) {
  const base = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  // One file per server process, removed when it stops: rounds do not pile rows up.
  const file = join(dir, `naive-${process.pid}.db`);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE IF NOT EXISTS calls (message TEXT, prompt BLOB, completion BLOB, logprobs BLOB)');
  const insert = db.prepare('INSERT INTO calls VALUES (?, ?, ?, ?)');
  const server = createServer((req, res) => {
    read(req, (body) => {
      const { messages } = JSON.parse(body.toString()) as { messages: unknown[] };
      const headers = { 'content-type': 'application/json', 'content-length': body.length };
      const up = request(
        { host: base.hostname, port: base.port, method: 'POST', path: req.url, headers, agent },
        (a) => {
          const stream = String(a.headers['content-type']).startsWith('text/event-stream');
          if (stream) res.writeHead(a.statusCode ?? 502, { 'content-type': 'text/event-stream' });
          const relay = stream ? (chunk: Buffer) => void res.write(chunk) : undefined;
          read(
            a,
            (bytes) => {
              const t = tokensOf(bytes.toString(), stream);
              const message = JSON.stringify(messages.at(-1));
              insert.run(
                message,
                blob(new Int32Array(t.prompt)),
                blob(new Int32Array(t.ids)),
                blob(new Float64Array(t.logprobs)),
              );
              if (stream) res.end();
              else
                res
                  .writeHead(a.statusCode ?? 502, {
                    'content-type': 'application/json',
                    'content-length': bytes.length,
                  })
                  .end(bytes);
            },
            relay,
          );
        },
      );
      up.on('error', (err) => (res.headersSent ? res.destroy(err) : res.writeHead(502).end(String(err))));
      up.end(body);
    });
  });
  return listenLocal(server, () => {
    agent.destroy();
    db.close();
    for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
  });
}
