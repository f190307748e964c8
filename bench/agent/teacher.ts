// The warm-up's teacher: a program in a model's place (no model that can call tools is reachable here to teach the
// format). An OpenAI-compatible server that answers a question with one call of the first tool offered, the
// question's arithmetic expression as its argument, and a tool's result with that result: the demonstrations the
// student's SFT warm-up renders with its own template (bench/agent.ts). It teaches the format, on another task than the
// one RL and the evaluation use; what the student then learns on products is its own.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

type Message = { role: string; content?: string | null };
type Body = { messages: Message[]; tools?: { function: { name: string } }[] };

/** The answer to a chat request: a tool call where the last turn is the user's, the tool's result after a tool turn. */
export function teacherAnswer(body: Body): Record<string, unknown> {
  const last = body.messages.at(-1);
  const tool = body.tools?.[0]?.function.name;
  if (last?.role === 'user' && tool) {
    const expression = /\d+(?:\s*[-+*/]\s*\d+)+/.exec(String(last.content))?.[0] ?? String(last.content);
    const call = { id: `call_${Math.random().toString(36).slice(2)}`, type: 'function' };
    const fn = { name: tool, arguments: JSON.stringify({ expression }) };
    return {
      message: { role: 'assistant', content: null, tool_calls: [{ ...call, function: fn }] },
      finish: 'tool_calls',
    };
  }
  return { message: { role: 'assistant', content: String(last?.content ?? '') }, finish: 'stop' };
}

/** The teacher on a loopback port; its base URL (…/v1) and the server to close. */
export async function startTeacher(): Promise<{ url: string; server: Server }> {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const send = (status: number, obj: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(obj));
    if (req.url === '/v1/models') return send(200, { object: 'list', data: [{ id: 'teacher', object: 'model' }] });
    if (req.url !== '/v1/chat/completions') return send(404, { error: { message: `no route ${req.url}` } });
    const { message, finish } = teacherAnswer(JSON.parse(Buffer.concat(chunks).toString()) as Body) as {
      message: unknown;
      finish: string;
    };
    send(200, {
      id: `chatcmpl-${Date.now()}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: 'teacher',
      choices: [{ index: 0, message, finish_reason: finish }],
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, server };
}
