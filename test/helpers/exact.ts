import { expect } from 'vitest';
import { rolloutTrace } from '../../src/traces/export.js';
import type { Rig } from './gateway.js';

// Apart from gateway.ts, which the benchmarks and the Gemini CLI rig import outside vitest.

/**
 * Every recorded call of the rollout has the upstream's exact tokens and logprobs, and each prompt extends the previous
 * prompt + completion. Returns the trace.
 */
export function expectExactAndLinear(rig: Rig, rolloutId: string): ReturnType<typeof rolloutTrace> {
  const trace = rolloutTrace(rig.store, rolloutId);
  trace.calls.forEach((call, i) => {
    const produced = rig.upstream.log[i];
    expect(call.prompt_token_ids).toEqual(produced.promptIds);
    expect(call.completion_token_ids).toEqual(produced.completionIds);
    expect(call.completion_logprobs).toEqual(produced.logprobs);
    if (i > 0) {
      const before = [...rig.upstream.log[i - 1].promptIds, ...rig.upstream.log[i - 1].completionIds];
      expect(produced.promptIds.slice(0, before.length)).toEqual(before);
    }
  });
  return trace;
}
