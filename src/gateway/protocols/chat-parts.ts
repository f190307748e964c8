import { openaiChat } from './openai-chat.js';
import type { ScannedAnswer } from './token-fields.js';
import { streamChoice } from './tokens.js';
import { type ChatAnswer, chatAnswer } from './translate.js';
import type { HarnessView, StreamAssembler } from './types.js';

type Obj = Record<string, unknown>;

/** One part of an answer as a translated stream presents it: reasoning, text, or one tool call. */
export type Part = { kind: 'reasoning' | 'text' } | { kind: 'tool'; id: string; name: string };

/** How one protocol writes the parts of a streamed answer as its events (each returns SSE text). */
export interface PartEvents {
  open(part: Part, index: number): string;
  delta(part: Part, index: number, text: string): string;
  /** `text` is all of the part's text (the tool call's whole arguments). */
  close(part: Part, index: number, text: string): string;
}

/**
 * Splits a chat/completions stream into the answer's parts in the order the model wrote them: a part opens at its
 * first delta and closes when another begins, or at the end.
 */
export class ChatParts {
  private readonly chat: StreamAssembler = openaiChat.assembler();
  private current: { part: Part; index: number; text: string } | null = null;
  private count = 0;
  private toolIndex: unknown = null;

  constructor(private readonly events: PartEvents) {}

  push(read: ScannedAnswer): string {
    this.chat.push(read);
    const { choice } = streamChoice(read);
    const delta = (choice?.delta ?? {}) as Obj;
    let out = '';
    const reasoning = delta.reasoning ?? delta.reasoning_content;
    if (typeof reasoning === 'string' && reasoning) out += this.text({ kind: 'reasoning' }, reasoning);
    if (typeof delta.content === 'string' && delta.content) out += this.text({ kind: 'text' }, delta.content);
    for (const d of (delta.tool_calls as Obj[] | undefined) ?? []) {
      const fn = (d.function ?? {}) as Obj;
      if (d.index !== this.toolIndex || this.current?.part.kind !== 'tool') {
        this.toolIndex = d.index;
        out += this.openPart({ kind: 'tool', id: String(d.id ?? `call_${this.count}`), name: String(fn.name ?? '') });
      }
      if (typeof fn.arguments === 'string' && fn.arguments) out += this.append(fn.arguments);
    }
    return out;
  }

  /** Closes the open part; the stream is over. */
  finish(): string {
    const open = this.current;
    this.current = null;
    return open ? this.events.close(open.part, open.index, open.text) : '';
  }

  /** The answer as assembled so far. */
  answer(): ChatAnswer & { chat: Obj } {
    const { response } = this.chat.result();
    return { ...chatAnswer(response), chat: response };
  }

  private text(part: Part, text: string): string {
    const open = this.current?.part.kind === part.kind ? '' : this.openPart(part);
    return open + this.append(text);
  }

  private openPart(part: Part): string {
    const closed = this.finish();
    this.current = { part, index: this.count++, text: '' };
    return closed + this.events.open(part, this.current.index);
  }

  private append(text: string): string {
    const open = this.current!;
    open.text += text;
    return this.events.delta(open.part, open.index, text);
  }
}

/** How one translated protocol opens, closes and breaks its stream around its parts' events. */
export interface StreamShape {
  /** The harness's answer for a whole chat answer (without its token fields). */
  whole(answer: Obj): Obj;
  /** The events before the first chunk's (given that chunk). */
  start(chunk: ScannedAnswer): string;
  /** The events after the last part closed. */
  end(): string;
  broken(message: string): string;
}

/** The harness's view of a translated stream: an upstream error breaks it, the first chunk opens it, parts follow. */
export function partsView(parts: ChatParts, shape: StreamShape): HarnessView {
  let started = false;
  return {
    whole: (a) => JSON.stringify(shape.whole(a.body)),
    event(_raw, chunk) {
      const { error } = chunk.body;
      if (error) return shape.broken(String((error as Obj).message ?? JSON.stringify(error)));
      const opening = started ? '' : shape.start(chunk);
      started = true;
      return opening + parts.push(chunk);
    },
    end: () => parts.finish() + shape.end(),
    broken: shape.broken,
  };
}
