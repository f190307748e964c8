import { type Content, GoogleGenAI, Type } from '@google/genai';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { rolloutTrace } from '../../src/traces/export.js';
import { expectExactAndLinear } from '../helpers/exact.js';
import { type Rig, rolloutEnv, startRig } from '../helpers/gateway.js';
import type { Reply } from '../helpers/scripted-upstream.js';

// The Gemini API through the gateway, driven by Google's own client (@google/genai), translated to chat/completions for
// a scripted vLLM-format upstream whose token ids are exact.
let rig: Rig;
afterEach(async () => rig?.close());

type Obj = Record<string, unknown>;
/** Reads a.txt, then b.txt, then answers with what the tools returned. */
function reply(_i: number, body: Obj): Reply {
  const results = (body.messages as Obj[]).filter((m) => m.role === 'tool').map((m) => JSON.parse(String(m.content)));
  if (results.length === 0) return { text: '', toolCalls: [{ name: 'read_file', arguments: '{"path": "a.txt"}' }] };
  if (results.length === 1)
    return { text: 'next ', toolCalls: [{ name: 'read_file', arguments: '{"path": "b.txt"}' }] };
  return { text: `files say ${results.map((r) => r.output).join(' and ')}` };
}

const readFile = {
  name: 'read_file',
  description: 'Read a file',
  parameters: { type: Type.OBJECT, properties: { path: { type: Type.STRING } }, required: ['path'] },
};

function client(): { ai: GoogleGenAI; rolloutId: string; token: string } {
  const { rollout, token, env } = rolloutEnv(rig);
  // Google's client on the contract's variables alone.
  const ai = new GoogleGenAI({ apiKey: env.GEMINI_API_KEY, httpOptions: { baseUrl: env.GOOGLE_GEMINI_BASE_URL } });
  return { ai, rolloutId: rollout.id, token };
}

describe('the Gemini API through the gateway (@google/genai)', () => {
  it('runs two function-call turns and an answer, whole and streamed, recorded token-exact', async () => {
    rig = await startRig({ reply });
    const { ai, rolloutId } = client();
    const config = { systemInstruction: 'You read files.', tools: [{ functionDeclarations: [readFile] }] };
    const contents: Content[] = [{ role: 'user', parts: [{ text: 'read the files' }] }];
    const model = 'gemini-2.5-pro';

    const first = await ai.models.generateContent({ model, contents, config });
    expect(first.functionCalls).toEqual([{ id: expect.any(String), name: 'read_file', args: { path: 'a.txt' } }]);
    expect(first.candidates?.[0].finishReason).toBe('STOP');
    const callA = first.candidates![0].content!;
    contents.push(callA, {
      role: 'user',
      parts: [
        { functionResponse: { id: first.functionCalls![0].id, name: 'read_file', response: { output: 'alpha' } } },
      ],
    });

    const chunks = [];
    for await (const chunk of await ai.models.generateContentStream({ model, contents, config })) chunks.push(chunk);
    expect(chunks.map((c) => c.text ?? '').join('')).toBe('next ');
    const calls = chunks.flatMap((c) => c.functionCalls ?? []);
    expect(calls).toEqual([{ id: expect.any(String), name: 'read_file', args: { path: 'b.txt' } }]);
    expect(chunks.at(-1)!.usageMetadata?.candidatesTokenCount).toBeGreaterThan(0);
    contents.push(
      { role: 'model', parts: [{ text: 'next ' }, { functionCall: calls[0] }] },
      {
        role: 'user',
        parts: [{ functionResponse: { id: calls[0].id, name: 'read_file', response: { output: 'beta' } } }],
      },
    );

    const last = await ai.models.generateContent({ model, contents, config });
    expect(last.text).toBe('files say alpha and beta');
    // Google's client sends the arguments back as an object; the gateway restores the model's own text by call id.
    const trace = expectExactAndLinear(rig, rolloutId);
    expect(trace.calls.map((c) => c.protocol)).toEqual(['gemini', 'gemini', 'gemini']);
    expect(trace.calls[1].stream).toBe(true);
  });

  it('records the same ids as the same conversation on chat/completions, and counts tokens as the template does', async () => {
    rig = await startRig({ reply: () => 'ok' });
    const { ai, rolloutId } = client();
    const contents: Content[] = [{ role: 'user', parts: [{ text: 'say ok' }] }];
    await ai.models.generateContent({
      model: 'gemini-2.5-flash',
      contents,
      config: { systemInstruction: 'Be brief.' },
    });
    const counted = await ai.models.countTokens({ model: 'gemini-2.5-flash', contents });
    const { token } = rig.gateway.rollouts.create({ run: 'r' });
    const openai = new OpenAI({ baseURL: `${rig.gateway.url}/r/${token}/v1`, apiKey: token, maxRetries: 0 });
    await openai.chat.completions.create({
      model: 'any',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'say ok' },
      ],
    });
    const [gemini, chat] = rig.upstream.log;
    expect(gemini.promptIds).toEqual(chat.promptIds);
    expect(rolloutTrace(rig.store, rolloutId).calls[0].prompt_token_ids).toEqual(chat.promptIds);
    // countTokens without the system instruction: the template's count of that conversation.
    const bare = (await fetch(`${rig.upstream.url.replace(/\/v1$/, '')}/tokenize`, {
      method: 'POST',
      body: JSON.stringify({ messages: [{ role: 'user', content: 'say ok' }] }),
    }).then((r) => r.json())) as { count: number };
    expect(counted.totalTokens).toBe(bare.count);
  });

  it('gives parallel calls of one function without ids distinct ids, each response its own call', async () => {
    rig = await startRig({ reply: () => 'done' });
    const { ai } = client();
    const call = (path: string) => ({ functionCall: { name: 'read_file', args: { path } } });
    const response = (output: string) => ({ functionResponse: { name: 'read_file', response: { output } } });
    await ai.models.generateContent({
      model: 'gemini-2.5-pro',
      contents: [
        { role: 'user', parts: [{ text: 'read both' }] },
        { role: 'model', parts: [call('a.txt'), call('b.txt')] },
        { role: 'user', parts: [response('alpha'), response('beta')] },
      ],
      config: { tools: [{ functionDeclarations: [readFile] }] },
    });
    const messages = rig.upstream.log[0].request.messages as Obj[];
    const ids = ((messages[1].tool_calls as Obj[]) ?? []).map((c) => c.id);
    expect(new Set(ids).size).toBe(2);
    expect(messages.slice(2).map((m) => [m.role, m.tool_call_id, m.content])).toEqual([
      ['tool', ids[0], '{"output":"alpha"}'],
      ['tool', ids[1], '{"output":"beta"}'],
    ]);
  });

  it("answers a malformed request in Google's error shape, and maps the generation config", async () => {
    rig = await startRig({ reply: () => '{"ok": true}' });
    const { ai, token } = client();
    const bad = await fetch(`${rig.gateway.url}/r/${token}/v1beta/models/gemini-2.5-pro:generateContent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contents: 'hello' }),
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({
      error: { code: 400, message: expect.stringMatching(/`contents`/), status: 'INVALID_ARGUMENT' },
    });
    await ai.models.generateContent({
      model: 'gemini-2.5-pro',
      contents: 'give json',
      config: {
        temperature: 0.3,
        topP: 0.9,
        topK: 20,
        maxOutputTokens: 64,
        stopSequences: ['END'],
        seed: 7,
        responseMimeType: 'application/json',
        responseSchema: { type: Type.OBJECT, properties: { ok: { type: Type.BOOLEAN } } },
        thinkingConfig: { thinkingBudget: 0 },
      },
    });
    expect(rig.upstream.log[0].request).toMatchObject({
      temperature: 0.3,
      top_p: 0.9,
      top_k: 20,
      max_tokens: 64,
      stop: ['END'],
      seed: 7,
      response_format: {
        type: 'json_schema',
        json_schema: { schema: { type: 'object', properties: { ok: { type: 'boolean' } } } },
      },
      chat_template_kwargs: { enable_thinking: false },
    });
  });
});
