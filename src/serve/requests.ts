import { z } from 'zod';
import { HttpError } from '../http.js';
import type { ChatTurn } from './engine.js';

const sampling = {
  model: z.string().optional(),
  max_tokens: z.number().int().positive().optional(),
  max_completion_tokens: z.number().int().positive().optional(),
  temperature: z.number().min(0).max(2).default(1),
  top_p: z.number().gt(0).max(1).optional(),
  top_k: z.number().int().min(-1).optional(),
  seed: z.number().int().optional(),
  stop: z.union([z.string().min(1), z.array(z.string().min(1)).max(16)]).optional(),
  stream: z.boolean().default(false),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullish(),
  n: z.literal(1, { message: 'alight serve samples one answer per request (n = 1)' }).optional(),
  top_logprobs: z
    .literal(0, { message: "alight serve returns the sampled token's logprob only (top_logprobs = 0)" })
    .nullish(),
  return_token_ids: z.boolean().default(false),
};

const part = z.object({ type: z.string(), text: z.string().optional() });
const message = z.object({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
  content: z.union([z.string(), z.array(part), z.null()]).optional(),
  tool_calls: z.array(z.unknown()).optional(),
});

// A JSON answer (any object, or one a JSON schema describes), sampled under a grammar as vLLM's guided decoding does:
// what lets a small model be a judge whose answers parse.
const responseFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.object({
    type: z.literal('json_schema'),
    json_schema: z.object({ name: z.string().optional(), schema: z.record(z.string(), z.unknown()) }).passthrough(),
  }),
]);

export const chatRequest = z.object({
  ...sampling,
  messages: z.array(message).min(1),
  logprobs: z.boolean().default(false),
  response_format: responseFormat.optional(),
});

/** The JSON a chat request asks its answer to be: a schema, `true` for any object, or null for free text. */
export function jsonAnswer(body: ChatRequest): Record<string, unknown> | true | null {
  const f = body.response_format;
  if (f?.type === 'json_schema') return f.json_schema.schema;
  return f?.type === 'json_object' ? true : null;
}
export const completionRequest = z.object({
  ...sampling,
  prompt: z.union([z.string(), z.array(z.number().int().min(0)).min(1)]),
  logprobs: z
    .number()
    .int()
    .min(0)
    .max(0, "alight serve returns the sampled token's logprob only (logprobs = 0)")
    .nullish(),
});
export type ChatRequest = z.infer<typeof chatRequest>;
export type CompletionRequest = z.infer<typeof completionRequest>;

/** OpenAI messages as the turns a chat template knows: tool results become user turns, developer turns system ones. */
export function chatTurns(messages: ChatRequest['messages']): ChatTurn[] {
  return messages.map((m) => {
    const text =
      typeof m.content === 'string'
        ? m.content
        : (m.content ?? [])
            .map((p) => {
              if (p.type !== 'text' || p.text === undefined)
                throw new HttpError(400, `content parts of type ${p.type} are not supported (text only)`);
              return p.text;
            })
            .join('');
    if (m.role === 'tool') return { role: 'user', text: `Tool result:\n${text}` };
    // No tool format in the template: earlier tool calls stay visible to the model as text.
    if (m.role === 'assistant' && m.tool_calls?.length)
      return { role: 'assistant', text: `${text}${JSON.stringify(m.tool_calls)}` };
    return { role: m.role === 'developer' ? 'system' : m.role, text };
  });
}
