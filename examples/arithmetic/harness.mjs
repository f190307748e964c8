// The arithmetic agent: one question on the official openai SDK, graded by the task's verifier (reasoning-gym's, see
// verifier.mjs). It knows nothing of alight beyond the harness contract's environment (OPENAI_BASE_URL,
// ALIGHT_TASK_JSON, ALIGHT_REWARD_URL, ALIGHT_MODE). It samples at ARITHMETIC_TEMPERATURE and ARITHMETIC_TOP_P (default
// 1 and 1) while training and answers greedily when evaluated (ALIGHT_MODE=val). ARITHMETIC_HINT=1 tells it the answer
// in the question: a teacher with privileged information, whose traces a student learns from without it
// (`alight samples curate --render … --strip`, bench/rft.ts).
import OpenAI from 'openai';
import { computeDecimalReward, finalAnswer } from './verifier.mjs';

const SYSTEM = 'Solve the problem. End your reply with the final answer.';

const task = JSON.parse(process.env.ALIGHT_TASK_JSON);
const hint = process.env.ARITHMETIC_HINT === '1' ? ` (Hint: the answer is ${task.answer}.)` : '';
const openai = new OpenAI();
const answer = await openai.chat.completions.create({
  model: 'policy',
  messages: [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: task.question + hint },
  ],
  max_tokens: Number(process.env.ARITHMETIC_MAX_TOKENS ?? 48),
  temperature: process.env.ALIGHT_MODE === 'val' ? 0 : Number(process.env.ARITHMETIC_TEMPERATURE ?? 1),
  top_p: Number(process.env.ARITHMETIC_TOP_P ?? 1),
});
const reply = answer.choices[0].message.content ?? '';
const given = finalAnswer(reply);
await fetch(process.env.ALIGHT_REWARD_URL, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ value: computeDecimalReward(given, task.answer), reason: `${given} (${task.answer})` }),
});
