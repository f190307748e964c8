#!/usr/bin/env node
// An example harness for alight: a two-turn agent over plain fetch (no dependencies).
// alight sets OPENAI_BASE_URL, OPENAI_API_KEY, ALIGHT_REWARD_URL and ALIGHT_TASK_JSON; any agent that
// reads the first two works unchanged. Run it:  alight record --tasks tasks.jsonl -n 2 -- node harness.mjs
const base = process.env.OPENAI_BASE_URL;
const key = process.env.OPENAI_API_KEY;
const task = JSON.parse(process.env.ALIGHT_TASK_JSON ?? 'null') ?? { question: 'What is 2 + 2?', answer: '4' };
if (!base) throw new Error('OPENAI_BASE_URL is not set: run me under `alight record`');

async function chat(messages, stream) {
  const res = await fetch(`${base}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: 'policy', messages, stream, max_tokens: 64, temperature: 1 }),
  });
  if (!res.ok) throw new Error(`model call failed: ${res.status} ${await res.text()}`);
  if (!stream) return (await res.json()).choices[0].message.content ?? '';
  let text = '';
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of res.body) {
    buffer += decoder.decode(bytes, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const line = buffer.slice(0, end).replace(/^data: /, '');
      buffer = buffer.slice(end + 2);
      if (line === '[DONE]') continue;
      const chunk = JSON.parse(line);
      if (chunk.error) throw new Error(chunk.error.message);
      text += chunk.choices[0]?.delta?.content ?? '';
    }
  }
  return text;
}

const messages = [
  { role: 'system', content: 'You are a careful assistant. Answer with a number.' },
  { role: 'user', content: task.question },
];
const first = await chat(messages, false);
messages.push({ role: 'assistant', content: first }, { role: 'user', content: 'Check your work, then give only the final number.' });
const final = await chat(messages, true);

const reward = final.includes(String(task.answer)) ? 1 : 0;
if (process.env.ALIGHT_REWARD_URL) {
  await fetch(process.env.ALIGHT_REWARD_URL, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ value: reward, reason: `answered ${final.trim().slice(0, 40)}` }),
  });
}
console.log(`${task.question} -> ${final.trim()} (reward ${reward})`);
