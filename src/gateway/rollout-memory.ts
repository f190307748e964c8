import { IdleCache } from '../store/idle-cache.js';
import type { RolloutMemory } from './protocols/index.js';
import type { PromptIdsHint } from './protocols/token-fields.js';
import { chatAnswer } from './protocols/translate.js';

type Obj = Record<string, unknown>;
type Exchange = { request: Obj; response: Obj };

interface Kept {
  responses: Map<string, Exchange>;
  items: Map<string, Obj>;
  toolArguments: Map<string, string>;
  reported: Set<string>;
  prompt: PromptIdsHint;
}

// Bounds per rollout: an agent refers back to its last few answers, and to tool calls of the turns it still shows.
const maxResponses = 64;
const maxToolCalls = 4096;
const maxItems = 4096;

function bounded<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value as string);
}

/**
 * What the gateway keeps of a live rollout's earlier calls: for translated protocols its answers by id (Responses'
 * `previous_response_id`) and the exact text of its tool calls' arguments; for the scanner its last prompt ids. Kept in
 * memory until the rollout ends, or is idle or among the least recently used past the gateway's cache bounds: a
 * harness that then names an earlier answer gets the error of an unknown `previous_response_id`.
 */
export class RolloutMemories {
  private readonly byRollout: IdleCache<Kept>;

  /** `report` records, once per rollout, what a translation left out. */
  constructor(
    private readonly report: (rolloutId: string, kind: string, names: string[]) => void,
    rollouts: number,
    idleMs: number,
  ) {
    this.byRollout = new IdleCache(rollouts, idleMs);
  }

  for(rolloutId: string): RolloutMemory {
    const kept = (): Kept | undefined => this.byRollout.get(rolloutId);
    return {
      earlier: (id) => kept()?.responses.get(id) ?? null,
      item: (id) => kept()?.items.get(id),
      toolArguments: (id) => kept()?.toolArguments.get(id),
      dropped: (kind, names) => {
        const key = `${kind}:${[...names].sort().join(',')}`;
        const k = this.kept(rolloutId);
        if (k.reported.has(key)) return;
        k.reported.add(key);
        this.report(rolloutId, kind, names);
      },
    };
  }

  /** Keeps a translated call's answer and the tool calls of its chat answer. */
  keep(rolloutId: string, exchange: Exchange, chat: Obj): void {
    const k = this.kept(rolloutId);
    if (typeof exchange.response.id === 'string') bounded(k.responses, exchange.response.id, exchange, maxResponses);
    for (const item of (exchange.response.output as Obj[] | undefined) ?? []) {
      if (typeof item.id === 'string') bounded(k.items, item.id, item, maxItems);
    }
    this.keepToolCalls(rolloutId, chat);
  }

  /** The argument text of a chat answer's tool calls, by the ids the harness was given (translate.ts's reading). */
  keepToolCalls(rolloutId: string, chat: Obj): void {
    const k = this.kept(rolloutId);
    for (const call of chatAnswer(chat).toolCalls) bounded(k.toolArguments, call.id, call.arguments, maxToolCalls);
  }

  /** The rollout's last prompt ids as the scanner keeps them (token-scan.ts). */
  promptHint(rolloutId: string): PromptIdsHint {
    return this.kept(rolloutId).prompt;
  }

  forget(rolloutId: string): void {
    this.byRollout.delete(rolloutId);
  }

  private kept(rolloutId: string): Kept {
    let k = this.byRollout.get(rolloutId);
    if (!k)
      this.byRollout.set(
        rolloutId,
        (k = {
          responses: new Map(),
          items: new Map(),
          toolArguments: new Map(),
          reported: new Set(),
          prompt: { text: null, ids: null },
        }),
      );
    return k;
  }
}
