import { errorBody, HttpError } from '../../http.js';
import { relayView } from './relay-view.js';
import type { ChoiceTokens, ScannedAnswer } from './token-fields.js';
import { extractWhole, streamChoice, TokenAccumulator } from './tokens.js';
import { apiPaths, type Extracted, type Protocol, type StreamAssembler } from './types.js';

type Obj = Record<string, unknown>;

/**
 * The sampled tokens' logprobs. With `echo`, vLLM's logprobs cover the prompt first (its first entry null); the
 * sampled tokens' are the last as many as the choice's token ids.
 */
function completionLogprobs(choice: ChoiceTokens | undefined): number[] | null {
  const lp = choice?.tokenLogprobs;
  if (!lp) return null;
  const ids = choice.tokenIds;
  return ids && lp.length > ids.length ? lp.slice(lp.length - ids.length) : lp;
}

/** A prompt given as one text (or a list holding one text), else null. */
function promptText(prompt: unknown): string | null {
  if (typeof prompt === 'string') return prompt;
  return Array.isArray(prompt) && prompt.length === 1 && typeof prompt[0] === 'string' ? prompt[0] : null;
}

/**
 * vLLM leaves the echoed prompt out of `text` when token ids are asked for (they come as prompt_token_ids instead):
 * the harness that asked for `echo` gets the prompt put back in front of each choice's first text.
 */
function echoView(request: Obj): ((answer: Obj) => Obj) | undefined {
  const prompt = request.echo === true ? promptText(request.prompt) : null;
  if (prompt === null) return undefined;
  const echoed = new Set<unknown>();
  return (answer) => {
    if (!Array.isArray(answer.choices)) return answer;
    const choices = answer.choices.map((c: Obj) => {
      const index = c.index ?? 0;
      if (echoed.has(index)) return c;
      echoed.add(index);
      return { ...c, text: prompt + (typeof c.text === 'string' ? c.text : '') };
    });
    return { ...answer, choices };
  };
}

// vLLM puts the prompt ids on the choice for completions; accept the top level too.
function promptIdsOf(a: ScannedAnswer, choice: ChoiceTokens | undefined): Int32Array | null {
  return choice?.promptIds ?? a.tokens.promptIds;
}

class CompletionsAssembler implements StreamAssembler {
  private readonly tokens = new TokenAccumulator();
  private head: Obj = {};
  private text = '';

  push(read: ScannedAnswer): void {
    const chunk = read.body;
    if (!this.head.id) this.head = { id: chunk.id, created: chunk.created, model: chunk.model };
    if (chunk.usage) this.tokens.usage = chunk.usage as Obj;
    const { choice, tokens } = streamChoice(read);
    this.tokens.add(promptIdsOf(read, tokens), tokens?.tokenIds ?? null, completionLogprobs(tokens));
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
  routes: apiPaths('completions'),
  invalid: (body) => (body.prompt === undefined ? '`prompt` is required' : null),
  upstream(body, kind) {
    if (kind !== 'vllm') return { path: 'completions', body: { ...body } };
    if (body.echo === true && promptText(body.prompt) === null) {
      throw new HttpError(
        400,
        '`echo` with a prompt that is not one text cannot be recorded: ' +
          'vLLM leaves the echoed text out when it returns token ids, ' +
          'and the text of token ids cannot be rebuilt exactly here. Send the prompt as text, or leave out echo',
      );
    }
    // An integer here: 0 asks for the sampled token's logprob only; a larger number the harness chose is kept.
    return {
      path: 'completions',
      body: { ...body, return_token_ids: true, logprobs: typeof body.logprobs === 'number' ? body.logprobs : 0 },
    };
  },
  tokenFields: true,
  extract: (a) => extractWhole(a, promptIdsOf(a, a.tokens.choices[0]), completionLogprobs(a.tokens.choices[0])),
  assembler: () => new CompletionsAssembler(),
  view: (harness, upstream, kind) =>
    relayView(
      harness,
      upstream,
      kind,
      { tokenIds: harness.return_token_ids === true, logprobs: typeof harness.logprobs === 'number' },
      kind === 'vllm' ? echoView(harness) : undefined,
    ),
  errorBody,
};
