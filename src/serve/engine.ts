import { randomInt } from 'node:crypto';
import { availableParallelism } from 'node:os';
import {
  type ChatHistoryItem,
  type ChatWrapper,
  getLlama,
  type Llama,
  type LlamaContext,
  type LlamaContextSequence,
  type LlamaGrammar,
  LlamaGrammarEvaluationState,
  LlamaLogLevel,
  type LlamaModel,
  LlamaText,
  resolveChatWrapper,
  type Token,
} from 'node-llama-cpp';
import { AlightError, ExitCode } from '../errors.js';
import { HttpError } from '../http.js';

export interface EngineOptions {
  modelPath: string;
  /** Tokens per sequence (prompt + completion). */
  contextSize: number;
  /** Sequences evaluated at once; further requests wait. */
  parallel: number;
  threads?: number;
}

export interface ChatTurn {
  role: 'system' | 'user' | 'assistant';
  text: string;
}

/**
 * Where a JSON answer ends: the grammar lets whitespace follow a complete object for as long as the model likes, so the
 * text stops at a run of newlines (node-llama-cpp's own trigger for its JSON grammars).
 */
export const jsonAnswerEnd = '\n\n\n\n';

/** Compiled JSON grammars an engine keeps (the oldest dropped first). */
const grammarsKept = 16;

export interface Sampling {
  temperature: number;
  topP?: number;
  topK?: number;
  seed?: number;
  maxTokens: number;
  /** The answer is JSON: any object (true) or one this JSON schema describes, sampled under a grammar. */
  json?: Record<string, unknown> | true | null;
}

/**
 * One sampled token and its log-probability under the distribution it was sampled from (after temperature, top-k/p).
 */
export interface Sampled {
  token: number;
  logprob: number;
}

/**
 * The embedded engine: a GGUF model on llama.cpp (CPU), its own chat template, and a pool of sequences.
 * Prompt ids are exactly the tokens evaluated; completions are sampled token by token with their logprobs.
 */
export class Engine {
  private readonly free: LlamaContextSequence[];
  private readonly waiting: ((s: LlamaContextSequence) => void)[] = [];
  // The last few schemas' grammars, compiled once: a client retrying or sending one schema often reuses them. Bounded,
  // since a judge's schema names its call's random ids and so differs every call.
  private readonly grammars = new Map<string, Promise<LlamaGrammar>>();

  private constructor(
    private readonly llama: Llama,
    readonly model: LlamaModel,
    private readonly context: LlamaContext,
    private readonly chat: ChatWrapper,
    readonly contextSize: number,
  ) {
    this.free = Array.from({ length: context.totalSequences }, () => context.getSequence());
  }

  static async load(options: EngineOptions): Promise<Engine> {
    // More threads than cores makes llama.cpp's workers spin against each other (10× slower on 2 cores).
    const threads = options.threads ?? availableParallelism();
    try {
      const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
      const model = await llama.loadModel({ modelPath: options.modelPath });
      const context = await model.createContext({
        contextSize: options.contextSize,
        sequences: options.parallel,
        threads,
      });
      return new Engine(llama, model, context, resolveChatWrapper(model), options.contextSize);
    } catch (err) {
      throw new AlightError(`cannot load ${options.modelPath}: ${(err as Error).message}`, ExitCode.input);
    }
  }

  /**
   * The chat template applied to `turns`, ending where the assistant's answer starts, and the plain-text strings
   * that end a turn in this template (end-of-generation tokens end it anyway).
   */
  renderChat(turns: ChatTurn[]): { prompt: number[]; stops: string[] } {
    const history: ChatHistoryItem[] = turns.map((t) =>
      t.role === 'assistant' ? { type: 'model', response: [t.text] } : { type: t.role, text: t.text },
    );
    history.push({ type: 'model', response: [] });
    const state = this.chat.generateContextState({ chatHistory: history });
    const stops = state.stopGenerationTriggers
      .map((trigger) => LlamaText(trigger))
      .filter((text) => text.values.every((v) => typeof v === 'string'))
      .map((text) => text.toString())
      .filter((text) => text.length > 0);
    return { prompt: [...state.contextText.tokenize(this.model.tokenizer)], stops };
  }

  /** A text prompt's tokens, with the beginning-of-sequence token the model expects (as vLLM adds it). */
  tokenize(text: string): number[] {
    const ids = [...this.model.tokenize(text, true)];
    const bos = this.model.tokens.bos;
    return bos !== null && this.model.tokens.shouldPrependBosToken && ids[0] !== bos ? [bos, ...ids] : ids;
  }

  detokenize(ids: number[]): string {
    return this.model.detokenize(ids as Token[], false);
  }

  isEndOfGeneration(token: number): boolean {
    return this.model.isEogToken(token as Token);
  }

  /**
   * Samples after `prompt` until the caller stops reading, the model ends its turn, or `maxTokens`.
   * Waits for a free sequence first; the sequence starts empty each time.
   */
  async *generate(prompt: number[], sampling: Sampling, signal: AbortSignal): AsyncGenerator<Sampled> {
    const grammar = sampling.json ? await this.grammar(sampling.json) : null;
    const sequence = await this.acquire(signal);
    try {
      await sequence.clearHistory();
      // No hidden truncation (llama.cpp would default to top-p 0.95, top-k 40) and a fresh seed per request
      // (it would use the current second, so that the rollouts of a group started together would sample alike).
      const tokens = sequence.evaluateWithMetadata(
        prompt as Token[],
        { confidence: true },
        {
          temperature: sampling.temperature,
          topP: sampling.topP ?? 1,
          topK: sampling.topK ?? 0,
          seed: sampling.seed ?? randomInt(2 ** 31),
          yieldEogToken: true,
          grammarEvaluationState: grammar ? new LlamaGrammarEvaluationState({ model: this.model, grammar }) : undefined,
        },
      );
      let n = 0;
      for await (const { token, confidence } of tokens) {
        if (signal.aborted) return;
        yield { token, logprob: Math.log(confidence) };
        if (++n >= sampling.maxTokens || this.isEndOfGeneration(token)) return;
      }
    } finally {
      this.release(sequence);
    }
  }

  /** The grammar of JSON answers (`true`: any object), kept for the last schemas; a schema it cannot express is a 400. */
  private grammar(json: Record<string, unknown> | true): Promise<LlamaGrammar> {
    const key = JSON.stringify(json);
    let compiled = this.grammars.get(key);
    if (!compiled) {
      compiled = (
        json === true
          ? this.llama.getGrammarFor('json')
          : this.llama.createGrammarForJsonSchema(json as Parameters<Llama['createGrammarForJsonSchema']>[0])
      ).catch((err: Error) => {
        this.grammars.delete(key);
        throw new HttpError(400, `response_format: this JSON schema cannot be sampled: ${err.message}`);
      });
      this.grammars.set(key, compiled);
      if (this.grammars.size > grammarsKept) this.grammars.delete(this.grammars.keys().next().value!);
    }
    return compiled;
  }

  /** Sequences in use and requests waiting for one: after every client has gone, both must fall back to 0. */
  load(): { sequences: number; busy: number; waiting: number } {
    const sequences = this.context.totalSequences;
    return { sequences, busy: sequences - this.free.length, waiting: this.waiting.length };
  }

  async close(): Promise<void> {
    await this.context.dispose();
    await this.model.dispose();
  }

  private acquire(signal: AbortSignal): Promise<LlamaContextSequence> {
    signal.throwIfAborted();
    const sequence = this.free.pop();
    if (sequence) return Promise.resolve(sequence);
    return new Promise((resolve, reject) => {
      const take = (s: LlamaContextSequence): void => {
        signal.removeEventListener('abort', onAbort);
        resolve(s);
      };
      const onAbort = (): void => {
        this.waiting.splice(this.waiting.indexOf(take), 1);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(take);
    });
  }

  private release(sequence: LlamaContextSequence): void {
    const next = this.waiting.shift();
    if (next) next(sequence);
    else this.free.push(sequence);
  }
}
