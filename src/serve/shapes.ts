import type { Completion, Piece } from './generation.js';

type Obj = Record<string, unknown>;
export interface Meta {
  id: string;
  created: number;
  model: string;
}

/**
 * How answers of one OpenAI protocol look, with vLLM's `return_token_ids` fields (docs/design.md#gateway-api, vLLM ≥
 * 0.10.2).
 */
export interface Shape {
  idPrefix: string;
  head(meta: Meta): Obj;
  whole(meta: Meta, prompt: number[], done: Completion, ids: boolean, tokenTexts: string[]): Obj;
  first(meta: Meta, prompt: number[] | null): Obj;
  piece(meta: Meta, piece: Piece, tokenText: string, ids: boolean): Obj;
  last(meta: Meta, text: string, finishReason: string): Obj;
}

export function usage(prompt: number[], done: Completion): Record<string, number> {
  return {
    prompt_tokens: prompt.length,
    completion_tokens: done.ids.length,
    total_tokens: prompt.length + done.ids.length,
  };
}

// A token that ends inside a character decodes to U+FFFD: its own bytes are not known from the text.
const logprobEntry = (token: string, logprob: number): Obj => ({
  token,
  logprob,
  bytes: token.includes('\uFFFD') ? null : [...Buffer.from(token)],
  top_logprobs: [],
});

function completionLogprobs(texts: string[], logprobs: number[]): Obj {
  let offset = 0;
  const offsets = texts.map((t) => {
    const at = offset;
    offset += t.length;
    return at;
  });
  return {
    tokens: texts,
    token_logprobs: logprobs,
    text_offset: offsets,
    top_logprobs: texts.map((t, i) => ({ [t]: logprobs[i] })),
  };
}

export function chatShape(logprobs: boolean): Shape {
  const head = (m: Meta, object: string): Obj => ({ id: m.id, object, created: m.created, model: m.model });
  return {
    idPrefix: 'chatcmpl',
    head: (m) => head(m, 'chat.completion.chunk'),
    whole: (m, prompt, done, ids, texts) => ({
      ...head(m, 'chat.completion'),
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: done.text },
          finish_reason: done.finishReason,
          logprobs: logprobs ? { content: done.logprobs.map((lp, i) => logprobEntry(texts[i], lp)) } : null,
          ...(ids && { token_ids: done.ids }),
        },
      ],
      usage: usage(prompt, done),
      ...(ids && { prompt_token_ids: prompt }),
    }),
    first: (m, prompt) => ({
      ...head(m, 'chat.completion.chunk'),
      ...(prompt && { prompt_token_ids: prompt }),
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }],
    }),
    piece: (m, p, tokenText, ids) => ({
      ...head(m, 'chat.completion.chunk'),
      choices: [
        {
          index: 0,
          delta: { content: p.text },
          finish_reason: null,
          logprobs: logprobs ? { content: [logprobEntry(tokenText, p.logprob)] } : null,
          ...(ids && { token_ids: [p.token] }),
        },
      ],
    }),
    last: (m, text, finish) => ({
      ...head(m, 'chat.completion.chunk'),
      choices: [{ index: 0, delta: { content: text }, logprobs: null, finish_reason: finish }],
    }),
  };
}

export function completionShape(logprobs: boolean): Shape {
  const head = (m: Meta): Obj => ({ id: m.id, object: 'text_completion', created: m.created, model: m.model });
  return {
    idPrefix: 'cmpl',
    head,
    whole: (m, prompt, done, ids, texts) => ({
      ...head(m),
      choices: [
        {
          index: 0,
          text: done.text,
          finish_reason: done.finishReason,
          logprobs: logprobs ? completionLogprobs(texts, done.logprobs) : null,
          ...(ids && { prompt_token_ids: prompt, token_ids: done.ids }),
        },
      ],
      usage: usage(prompt, done),
    }),
    first: (m, prompt) => ({
      ...head(m),
      choices: [
        { index: 0, text: '', finish_reason: null, logprobs: null, ...(prompt && { prompt_token_ids: prompt }) },
      ],
    }),
    piece: (m, p, tokenText, ids) => ({
      ...head(m),
      choices: [
        {
          index: 0,
          text: p.text,
          finish_reason: null,
          logprobs: logprobs
            ? { tokens: [tokenText], token_logprobs: [p.logprob], top_logprobs: [{ [tokenText]: p.logprob }] }
            : null,
          ...(ids && { token_ids: [p.token] }),
        },
      ],
    }),
    last: (m, text, finish) => ({ ...head(m), choices: [{ index: 0, text, finish_reason: finish, logprobs: null }] }),
  };
}
