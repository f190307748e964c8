// The example agent: a two-turn conversation on the official openai SDK, graded by a verifiable reward. It knows
// nothing of alight beyond the environment the harness contract gives it (OPENAI_BASE_URL, ALIGHT_TASK_JSON, …).
// The grader wants every answer written in lowercase vowels only; a freshly initialised model writes any of its 91
// tokens, so the reward starts near 5/91 and RL has to find the format.
import OpenAI from 'openai';

const task = JSON.parse(process.env.ALIGHT_TASK_JSON);
const openai = new OpenAI();
const ask = async (messages) =>
  (await openai.chat.completions.create({ model: 'policy', messages, max_tokens: 8, temperature: 1 })).choices[0]
    .message.content ?? '';

const messages = [{ role: 'user', content: `${task.question} Answer in vowels only.` }];
const first = await ask(messages);
messages.push({ role: 'assistant', content: first }, { role: 'user', content: 'And once more?' });
const second = await ask(messages);

// The reward: the share of the first 8 characters of each answer that are lowercase vowels (a short answer scores less).
const score = (text) => [...text.padEnd(8).slice(0, 8)].filter((c) => 'aeiou'.includes(c)).length / 8;
const reward = (score(first) + score(second)) / 2;
await fetch(process.env.ALIGHT_REWARD_URL, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ value: reward, reason: `${first} | ${second}` }),
});
