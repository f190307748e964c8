import { Engine } from '../serve/engine.js';

/** A checked prompt as the converted folder renders it: chat-templated text, or a plain beginning for a base model. */
export interface CheckedPrompt {
  text: string;
  chat: boolean;
}

/** What llama.cpp makes of a prompt: its token ids, and its greedy continuation (the end-of-turn token included). */
export interface Reference extends CheckedPrompt {
  prompt_ids: number[];
  continuation_ids: number[];
}

/**
 * llama.cpp's greedy continuations of `prompts` on the GGUF (node-llama-cpp, as `alight serve` runs it): the
 * reference the converted folder is measured against.
 */
export async function greedyContinuations(
  gguf: string,
  prompts: CheckedPrompt[],
  tokens: number,
): Promise<Reference[]> {
  const engine = await Engine.load({ modelPath: gguf, contextSize: 1024, parallel: 1 });
  try {
    const references: Reference[] = [];
    for (const p of prompts) {
      // A chat-templated text carries its own beginning-of-sequence token where the template wants one; a plain one
      // gets it as `alight serve` adds it to a text prompt.
      const ids = p.chat ? [...engine.model.tokenize(p.text, true)] : engine.tokenize(p.text);
      const continuation: number[] = [];
      for await (const s of engine.generate(ids, { temperature: 0, maxTokens: tokens }, new AbortController().signal))
        continuation.push(s.token);
      references.push({ ...p, prompt_ids: ids, continuation_ids: continuation });
    }
    return references;
  } finally {
    await engine.close();
  }
}
