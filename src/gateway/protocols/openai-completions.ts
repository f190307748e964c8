import { extractWhole, numbers, TokenAccumulator } from './tokens.js';
import type { Extracted, Protocol, StreamAssembler } from './types.js';

type Obj = Record<string, unknown>;

function completionLogprobs(choice: Obj | undefined): number[] | null {
  const lp = (choice?.logprobs as Obj | null | undefined)?.token_logprobs;
  return Array.isArray(lp) ? (lp as number[]) : null;
}

// vLLM puts the prompt ids on the choice for completions; accept the top level too.
function promptIdsOf(body: Obj, choice: Obj | undefined): number[] | null {
  return numbers(choice?.prompt_token_ids) ?? numbers(body.prompt_token_ids);
}

class CompletionsAssembler implements StreamAssembler {
  private readonly tokens = new TokenAccumulator();
  private head: Obj = {};
  private text = '';

  push(chunk: Obj): void {
    if (!this.head.id) this.head = { id: chunk.id, created: chunk.created, model: chunk.model };
    if (chunk.usage) this.tokens.usage = chunk.usage as Obj;
    const choice = (chunk.choices as Obj[] | undefined)?.find((c) => (c.index ?? 0) === 0);
    this.tokens.add(promptIdsOf(chunk, choice), numbers(choice?.token_ids), completionLogprobs(choice));
    if (!choice) return;
    if (typeof choice.text === 'string') this.text += choice.text;
    if (typeof choice.finish_reason === 'string') this.tokens.finishReason = choice.finish_reason;
  }

  finished(): boolean {
    return this.tokens.finishReason !== null;
  }

  result(): Extracted {
    return this.tokens.extracted({
      ...this.head,
      object: 'text_completion',
      choices: [{ index: 0, text: this.text, finish_reason: this.tokens.finishReason }],
      ...(this.tokens.usage && { usage: this.tokens.usage }),
    });
  }
}

export const openaiCompletions: Protocol = {
  name: 'openai.completions',
  path: 'completions',
  invalid: (body) => (body.prompt === undefined ? '`prompt` is required' : null),
  requestTokens(body) {
    body.return_token_ids = true;
    // An integer here: 0 asks for the sampled token's logprob only; a larger number the harness chose is kept.
    if (typeof body.logprobs !== 'number') body.logprobs = 0;
  },
  extract(body) {
    const choice = (body.choices as Obj[] | undefined)?.[0];
    return extractWhole(body, choice, promptIdsOf(body, choice), completionLogprobs(choice));
  },
  assembler: () => new CompletionsAssembler(),
};
