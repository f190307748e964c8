/** The shape of one benchmark request and its answer, shared by the load generator and the scripted upstream. */

/** Prompt ids the upstream returns with every answer (vLLM's `prompt_token_ids`); `npm run bench` runs 8k and 20k. */
export const PROMPT_TOKENS = Number(process.env.BENCH_PROMPT_TOKENS ?? 8192);
/** 199 ASCII bytes; with the closing IM_END the scripted byte tokenizer makes 200 completion tokens. */
export const REPLY = 'The answer, after reading the whole history: '.padEnd(199, 'x');
/** vLLM streams one token per chunk by default. */
export const TOKENS_PER_CHUNK = 1;
/** Size of the chat history each request carries. */
export const HISTORY_BYTES = 50 * 1024;

const MESSAGE_BYTES = 2000;
const words = [
  'the',
  'agent',
  'reads',
  'file',
  'src/index.ts',
  'and',
  'runs',
  '`npm test`',
  'which',
  'prints',
  '"ok"',
  'then',
];

function text(seed: number, bytes: number): string {
  let out = '';
  for (let i = seed; out.length < bytes; i++) out += words[(i * 7) % words.length] + (i % 13 === 0 ? '\n' : ' ');
  return out.slice(0, bytes);
}

/**
 * The serialised history of one client: a system prompt, then user/assistant turns, ~HISTORY_BYTES of JSON.
 * Every call of a client repeats it and appends a new user turn, as an agent loop does, so the gateway's
 * store can keep the shared part by reference.
 */
export function historyOf(client: number): string {
  const messages: string[] = [
    JSON.stringify({ role: 'system', content: `You are coding agent ${client}. ${text(client, MESSAGE_BYTES)}` }),
  ];
  for (let turn = 1; messages.join(',').length < HISTORY_BYTES - MESSAGE_BYTES; turn++) {
    messages.push(
      JSON.stringify({ role: turn % 2 ? 'user' : 'assistant', content: text(client * 100 + turn, MESSAGE_BYTES) }),
    );
  }
  return messages.join(',');
}

/**
 * The body of call `call` of a client, as a JSON string. It asks for token ids and logprobs itself (the gateway
 * would add both), so that the engine's answer is the same in every configuration.
 */
export function requestBody(history: string, call: number, stream: boolean): string {
  const last = JSON.stringify({ role: 'user', content: `Turn ${call}: run the tests again and fix what fails.` });
  return (
    `{"model":"scripted-model","stream":${stream},"logprobs":true,` +
    `"return_token_ids":true,"max_tokens":256,"messages":[${history},${last}]}`
  );
}
