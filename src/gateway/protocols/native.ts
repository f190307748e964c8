import { isRecord } from '../../records.js';
import type { ScannedAnswer } from './token-fields.js';
import type { Extracted, HarnessView, Protocol, StreamAssembler } from './types.js';

type Obj = Record<string, unknown>;

/**
 * Anthropic Messages and OpenAI Responses relayed unchanged to an upstream that serves them (a hosted API): the
 * harness's request and answer are the recorded ones, with no token ids (a hosted API gives none).
 */
function extracted(response: Obj, finishReason: unknown): Extracted {
  const usage = (response.usage ?? {}) as Obj;
  const count = (v: unknown): number | null => (typeof v === 'number' ? v : null);
  return {
    response,
    promptIds: null,
    completionIds: null,
    completionLogprobs: null,
    finishReason: typeof finishReason === 'string' ? finishReason : null,
    promptTokens: count(usage.input_tokens),
    completionTokens: count(usage.output_tokens),
  };
}

/** Rebuilds the Anthropic message from its events. */
class MessageAssembler implements StreamAssembler {
  private message: Obj = { content: [] };
  private done = false;

  push({ body: e }: ScannedAnswer): void {
    const content = this.message.content as Obj[];
    const delta = (e.delta ?? {}) as Obj;
    if (e.type === 'message_start' && isRecord(e.message)) this.message = { ...e.message, content: [] };
    else if (e.type === 'content_block_start' && isRecord(e.content_block))
      content[Number(e.index)] = { ...e.content_block, ...(e.content_block.type === 'tool_use' && { input: '' }) };
    else if (e.type === 'content_block_delta') {
      const block = content[Number(e.index)] ?? {};
      if (delta.type === 'text_delta') block.text = String(block.text ?? '') + String(delta.text);
      if (delta.type === 'thinking_delta') block.thinking = String(block.thinking ?? '') + String(delta.thinking);
      if (delta.type === 'input_json_delta') block.input = String(block.input ?? '') + String(delta.partial_json);
    } else if (e.type === 'content_block_stop') {
      const block = content[Number(e.index)];
      if (block?.type === 'tool_use' && typeof block.input === 'string')
        block.input = block.input ? JSON.parse(block.input) : {};
    } else if (e.type === 'message_delta') {
      Object.assign(this.message, delta);
      this.message.usage = { ...(this.message.usage as Obj | undefined), ...(e.usage as Obj | undefined) };
    } else if (e.type === 'message_stop') this.done = true;
  }

  result(): Extracted {
    return extracted(this.message, this.message.stop_reason);
  }
  finished(): boolean {
    return this.done;
  }
}

/** Responses streams end with the whole response in their last event. */
class ResponseAssembler implements StreamAssembler {
  private response: Obj = {};
  private done = false;

  push({ body: e }: ScannedAnswer): void {
    if (isRecord(e.response)) this.response = e.response;
    if (e.type === 'response.completed' || e.type === 'response.incomplete') this.done = true;
  }

  result(): Extracted {
    return extracted(this.response, this.response.status);
  }
  finished(): boolean {
    return this.done;
  }
}

/** Relays the upstream's events, holding back the last one until the call is stored (as `[DONE]` is for chat). */
function heldLastView(last: Set<string>, broken: (message: string) => string): HarnessView {
  let held = '';
  return {
    whole: () => null,
    event(raw, chunk) {
      if (!last.has(String(chunk.body.type))) return raw;
      held += raw;
      return '';
    },
    end: () => held,
    broken,
  };
}

export function nativeProtocol(
  of: Pick<Protocol, 'name' | 'path' | 'routes' | 'invalid' | 'errorBody'>,
  kind: 'messages' | 'responses',
  broken: (message: string) => string,
): Protocol {
  const last = new Set(kind === 'messages' ? ['message_stop'] : ['response.completed', 'response.incomplete']);
  return {
    ...of,
    upstream: (body) => ({ path: of.path, body: { ...body } }),
    tokenFields: false,
    extract: ({ body }) => extracted(body, kind === 'messages' ? body.stop_reason : body.status),
    assembler: () => (kind === 'messages' ? new MessageAssembler() : new ResponseAssembler()),
    view: () => heldLastView(last, broken),
  };
}
