// The calculator agent: an OpenAI Agents SDK agent (unmodified, over Chat Completions) with one function tool,
// `calculate`, asked a multiplication too long to do in its head (reasoning-gym's `products`, make_tasks.py). It knows
// nothing of alight beyond the harness contract's environment (OPENAI_BASE_URL, ALIGHT_TASK_JSON, ALIGHT_REWARD_URL,
// ALIGHT_MODE); the reward is the task's verifier (reasoning-gym's, the arithmetic example's) on its final answer. It
// samples at CALCULATOR_TEMPERATURE (default 1) while training and greedily when evaluated (ALIGHT_MODE=val).
import {
  Agent,
  MaxTurnsExceededError,
  run,
  setDefaultOpenAIClient,
  setOpenAIAPI,
  setTracingDisabled,
  tool,
} from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';
import { computeDecimalReward, finalAnswer } from '../arithmetic/verifier.mjs';
import { calculate } from './calculator.mjs';

const INSTRUCTIONS = 'Use the calculator for arithmetic. Then reply with the result alone.';

const task = JSON.parse(process.env.ALIGHT_TASK_JSON);
setTracingDisabled(true);
setOpenAIAPI('chat_completions');
setDefaultOpenAIClient(new OpenAI());
const stats = { calls: 0 };
const calculator = tool({
  name: 'calculate',
  description: 'The value of an arithmetic expression.',
  parameters: z.object({ expression: z.string() }),
  execute: async ({ expression }) => {
    stats.calls += 1;
    return calculate(expression);
  },
});
const greedy = process.env.ALIGHT_MODE === 'val';
const agent = new Agent({
  name: 'calculator',
  instructions: INSTRUCTIONS,
  model: 'policy',
  tools: [calculator],
  modelSettings: {
    temperature: greedy ? 0 : Number(process.env.CALCULATOR_TEMPERATURE ?? 1),
    topP: Number(process.env.CALCULATOR_TOP_P ?? 1),
    maxTokens: Number(process.env.CALCULATOR_MAX_TOKENS ?? 48),
  },
});
let reply = '';
let ended = 'answered';
try {
  const result = await run(agent, task.question, { maxTurns: Number(process.env.CALCULATOR_MAX_TURNS ?? 3) });
  reply = String(result.finalOutput ?? '');
} catch (err) {
  // Too many turns, or a call the SDK could not take (unknown tool, arguments that are not the schema's): no answer.
  ended = err instanceof MaxTurnsExceededError ? 'max-turns' : `error: ${err.message}`;
}
const given = reply ? finalAnswer(reply) : '';
await fetch(process.env.ALIGHT_REWARD_URL, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({
    value: computeDecimalReward(given, task.answer),
    reason: `${given} (${task.answer}); ${stats.calls} tool calls; ${ended}`,
  }),
});
