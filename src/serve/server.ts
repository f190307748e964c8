import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { z } from 'zod';
import { errorMessage } from '../errors.js';
import { errorBody, HttpError, hasBearer, listen, parseBody, Router, readJson, sendError, sendJson } from '../http.js';
import { type Engine, jsonAnswerEnd, type Sampling } from './engine.js';
import { type Completion, complete, type Piece } from './generation.js';
import {
  type ChatRequest,
  type CompletionRequest,
  chatRequest,
  chatTurns,
  completionRequest,
  jsonAnswer,
} from './requests.js';
import { chatShape, completionShape, type Meta, type Shape, usage } from './shapes.js';
import type { Weights } from './weights.js';

export interface ServeOptions {
  weights: Weights;
  /** Enables `POST /admin/reload` for holders of this key. */
  adminKey?: string;
  /** The name `/v1/models` lists and answers carry. */
  modelName: string;
  host: string;
  port: number;
  bodyLimit?: number;
}

export interface ModelServer {
  url: string;
  close(): Promise<void>;
}

/** `alight serve`: an OpenAI-compatible server over the embedded engine, speaking vLLM's token-id extensions. */
export async function startModelServer(options: ServeOptions): Promise<ModelServer> {
  const aborts = new Set<AbortController>();
  const server = createServer((req, res) => {
    handle(options, req, res, aborts).catch((err) => {
      sendError(
        res,
        err instanceof HttpError ? err : new HttpError(500, `server error: ${errorMessage(err)}`, 'server_error'),
      );
    });
  });
  const port = await listen(server, options.host, options.port);
  return {
    url: `http://${options.host}:${port}`,
    async close() {
      for (const a of aborts) a.abort(new Error('the server is shutting down'));
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await options.weights.close();
    },
  };
}

/** One request to the server: its settings, the request and its answer, the generations in flight to abort at close. */
interface ServeCall {
  options: ServeOptions;
  req: IncomingMessage;
  res: ServerResponse;
  aborts: Set<AbortController>;
}

const health = ({ options, res }: ServeCall) => sendJson(res, 200, { ok: true, ...options.weights.engine.load() });

const routes = new Router<(c: ServeCall) => Promise<void> | void>()
  .get('/health', health)
  .get('/healthz', health)
  .get('/v1/models', ({ options, res }) =>
    sendJson(res, 200, {
      object: 'list',
      data: [
        {
          id: options.modelName,
          object: 'model',
          owned_by: 'alight',
          max_model_len: options.weights.engine.contextSize,
        },
      ],
    }),
  )
  .post('/v1/chat/completions', async (c) => {
    const body = parseBody(chatRequest, await readJson(c.req, bodyLimit(c.options)));
    return c.options.weights.use((engine, version) => {
      const { prompt, stops } = engine.renderChat(chatTurns(body.messages));
      return generate(c, engine, version, { body, prompt, templateStops: stops, shape: chatShape(body.logprobs) });
    });
  })
  .post('/v1/completions', async (c) => {
    const body = parseBody(completionRequest, await readJson(c.req, bodyLimit(c.options)));
    return c.options.weights.use((engine, version) => {
      const prompt = typeof body.prompt === 'string' ? engine.tokenize(body.prompt) : body.prompt;
      const shape = completionShape(body.logprobs != null);
      return generate(c, engine, version, { body, prompt, templateStops: [], shape });
    });
  })
  .post('/admin/reload', reload);

const bodyLimit = (options: ServeOptions): number => options.bodyLimit ?? 64 << 20;

async function handle(
  options: ServeOptions,
  req: IncomingMessage,
  res: ServerResponse,
  aborts: Set<AbortController>,
): Promise<void> {
  const path = (req.url ?? '/').split('?', 1)[0];
  const found = routes.find(req.method ?? 'GET', path);
  if (!found) throw new HttpError(404, `no route ${req.method} ${path}`, 'not_found_error');
  return found.handler({ options, req, res, aborts });
}

/** `POST /admin/reload`, for the admin key's holder: loads other weights, which answer the next requests. */
async function reload({ options, req, res }: ServeCall): Promise<void> {
  if (!options.adminKey)
    throw new HttpError(403, 'reloading is off: start alight serve with ALIGHT_ADMIN_KEY set', 'permission_error');
  if (!hasBearer(req.headers.authorization, options.adminKey))
    throw new HttpError(401, 'reload needs `Authorization: Bearer <admin key>`', 'authentication_error');
  const { path: modelPath, version } = parseBody(reloadBody, await readJson(req, 1 << 20));
  const started = performance.now();
  try {
    await options.weights.reload(modelPath, version);
  } catch (err) {
    throw new HttpError(400, errorMessage(err));
  }
  return sendJson(res, 200, { version, path: modelPath, load_ms: Math.round(performance.now() - started) });
}

const reloadBody = z.object({ path: z.string().min(1), version: z.number().int().min(0) });

/** The header that tells the gateway which weights produced an answer. */
export const versionHeader = 'x-alight-model-version';

/** What one request asks the engine for: its body, its prompt's ids, the template's stops, the answer's shape. */
interface Generation {
  body: ChatRequest | CompletionRequest;
  prompt: number[];
  templateStops: string[];
  shape: Shape;
}

async function generate(
  { options, res, aborts }: ServeCall,
  engine: Engine,
  version: number,
  { body, prompt, templateStops, shape }: Generation,
): Promise<void> {
  const modelName = options.modelName;
  checkModelName(body.model, modelName);
  res.setHeader(versionHeader, String(version));
  const sampling = samplingFor(engine, body, prompt.length);
  const stops = [
    ...templateStops,
    ...(body.stop === undefined ? [] : [body.stop].flat()),
    ...(sampling.json ? [jsonAnswerEnd] : []),
  ];
  const abort = abortOnDisconnect(res);
  aborts.add(abort);
  const meta = {
    id: `${shape.idPrefix}-${randomBytes(12).toString('hex')}`,
    created: Math.floor(Date.now() / 1000),
    model: modelName,
  };
  const run = complete(engine, prompt, sampling, stops, abort.signal);
  try {
    if (!body.stream) return await sendWhole(run, engine, shape, meta, prompt, body.return_token_ids, res);
    await sendStream(run, engine, shape, meta, prompt, body, res);
  } catch (err) {
    if (abort.signal.aborted) return void res.end();
    if (!res.headersSent) throw err;
    res.end(`data: ${JSON.stringify(errorBody(500, errorMessage(err), 'server_error'))}\n\n`);
  } finally {
    aborts.delete(abort);
    // Ends the generator on every path, which gives its sequence back.
    await run.return(undefined as never);
  }
}

/** As vLLM: a wrong name is a misconfigured client. (Behind the gateway the name is pinned to this one.) */
function checkModelName(asked: string | undefined, modelName: string): void {
  if (asked !== undefined && asked !== modelName) {
    throw new HttpError(
      404,
      `The model \`${asked}\` does not exist; this server serves \`${modelName}\``,
      'not_found_error',
    );
  }
}

/** The request's sampling settings; a completion that cannot fit the context is refused, in vLLM's words. */
function samplingFor(engine: Engine, body: ChatRequest | CompletionRequest, promptLength: number): Sampling {
  const room = engine.contextSize - promptLength;
  const asked = body.max_completion_tokens ?? body.max_tokens;
  if (room <= 0 || (asked !== undefined && asked > room)) {
    throw new HttpError(
      400,
      `This model's maximum context length is ${engine.contextSize} tokens. However, you requested ` +
        `${promptLength + (asked ?? 0)} tokens (${promptLength} in the messages, ${asked ?? 0} in the completion). ` +
        'Please reduce the length of the messages or completion.',
    );
  }
  return {
    temperature: body.temperature,
    topP: body.top_p,
    topK: body.top_k === -1 ? undefined : body.top_k,
    seed: body.seed,
    maxTokens: asked ?? room,
    json: 'messages' in body ? jsonAnswer(body) : null,
  };
}

/** Aborts the generation when the client goes before its answer was written whole. */
function abortOnDisconnect(res: ServerResponse): AbortController {
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort(new Error('the client disconnected'));
  });
  return abort;
}

type Run = AsyncGenerator<Piece, Completion>;

/** Runs the generation to its end, then answers with the whole completion. */
async function sendWhole(
  run: Run,
  engine: Engine,
  shape: Shape,
  meta: Meta,
  prompt: number[],
  ids: boolean,
  res: ServerResponse,
): Promise<void> {
  let step = await run.next();
  while (!step.done) step = await run.next();
  const done = step.value;
  sendJson(
    res,
    200,
    shape.whole(
      meta,
      prompt,
      done,
      ids,
      done.ids.map((t) => engine.detokenize([t])),
    ),
  );
}

/** Streams the generation as server-sent events, a chunk per piece, then the usage when asked and `[DONE]`. */
async function sendStream(
  run: Run,
  engine: Engine,
  shape: Shape,
  meta: Meta,
  prompt: number[],
  body: ChatRequest | CompletionRequest,
  res: ServerResponse,
): Promise<void> {
  const ids = body.return_token_ids;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const send = (chunk: unknown): boolean => res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  send(shape.first(meta, ids ? prompt : null));
  let shown = 0;
  let step: IteratorResult<Piece, Completion>;
  while (!(step = await run.next()).done) {
    const piece = step.value;
    shown += piece.text.length;
    send(shape.piece(meta, piece, engine.detokenize([piece.token]), ids));
  }
  const done = step.value;
  send(shape.last(meta, done.text.slice(shown), done.finishReason));
  if (body.stream_options?.include_usage) send({ ...shape.head(meta), choices: [], usage: usage(prompt, done) });
  res.end('data: [DONE]\n\n');
}
