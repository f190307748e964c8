import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the scripted judge answers for a request: `ids` are the trajectory ids in its prompt, in order. */
export type JudgeReply = (
  ids: string[],
  body: { messages: { content: string }[] },
) => { status?: number; text: string; delayMs?: number };

export interface ScriptedJudge {
  url: string;
  requests: { messages: { content: string }[] }[];
  maxInFlight: number;
  close(): Promise<void>;
}

/** A local OpenAI-compatible chat server standing in for a judge model: its answers are `reply`'s. */
export async function startScriptedJudge(reply: JudgeReply): Promise<ScriptedJudge> {
  let inFlight = 0;
  let server: Server;
  const judge: ScriptedJudge = {
    url: '',
    requests: [],
    maxInFlight: 0,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const body = JSON.parse(raw);
    judge.requests.push(body);
    judge.maxInFlight = Math.max(judge.maxInFlight, ++inFlight);
    const ids = [...body.messages[1].content.matchAll(/<<trajectory-\w+ id=(\w+)>>/g)].map((m) => m[1]);
    const r = reply(ids, body);
    await new Promise((resolve) => setTimeout(resolve, r.delayMs ?? 5));
    inFlight--;
    if (res.destroyed) return;
    res.writeHead(r.status ?? 200, { 'content-type': 'application/json', connection: 'close' });
    res.end(
      JSON.stringify({
        choices: [{ message: { role: 'assistant', content: r.text } }],
        usage: { prompt_tokens: 100, completion_tokens: 10 },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  judge.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return judge;
}

/** The text inside each trajectory's block of a judge request, by id. */
export function trajectoryTexts(body: { messages: { content: string }[] }): Map<string, string> {
  const text = body.messages[1].content;
  return new Map(
    [...text.matchAll(/<<trajectory-(\w+) id=(\w+)>>\n([\s\S]*?)\n<<\/trajectory-\1 id=\2>>/g)].map((m) => [
      m[2],
      m[3],
    ]),
  );
}

/** The agent's messages in a trajectory's text ("[assistant]\n…" sections). */
export const assistantTexts = (block: string): string[] =>
  block
    .split(/\n\n(?=\[(?:assistant|user|system|tool)[^\]\n]*\]\n?)/)
    .filter((part) => part.startsWith('[assistant]'))
    .map((part) => part.replace(/^\[assistant\]\n?/, ''));
