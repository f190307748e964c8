import { describe, expect, it } from 'vitest';
import { callPurpose } from '../../src/gateway/purpose.js';

const asking = (...fields: string[]) => ({
  messages: [{ role: 'user', content: 'hi' }],
  response_format: {
    type: 'json_schema',
    json_schema: { name: 'r', schema: { type: 'object', properties: Object.fromEntries(fields.map((f) => [f, {}])) } },
  },
});

// The side calls of Gemini CLI 0.61.0, by the shapes its source gives them (packages/core/src: routing/strategies,
// utils/nextSpeakerChecker.ts, services/loopDetectionService.ts, services/chatCompressionService.ts).
describe('call purposes', () => {
  it('recognises a harness side call by what it asks for, and leaves the rest main', () => {
    expect(callPurpose({}, asking('reasoning', 'model_choice'))).toBe('router');
    expect(callPurpose({}, asking('complexity_reasoning', 'complexity_score'))).toBe('router');
    expect(callPurpose({}, asking('reasoning', 'next_speaker'))).toBe('next-speaker');
    expect(callPurpose({}, asking('unproductive_state_analysis', 'unproductive_state_confidence'))).toBe('loop-check');
    const compress = 'Generate a new <state_snapshot> based on the provided history.';
    expect(callPurpose({}, { messages: [{ role: 'user', content: [{ type: 'text', text: compress }] }] })).toBe(
      'compression',
    );
    // A snapshot earlier in the history (after a compression) does not make the agent's next turn a side call.
    const after = [
      { role: 'user', content: `<state_snapshot>…</state_snapshot>` },
      { role: 'user', content: 'go on' },
    ];
    expect(callPurpose({}, { messages: after })).toBe('main');
    expect(callPurpose({}, asking('answer', 'confidence'))).toBe('main');
    expect(callPurpose({}, { messages: [] })).toBe('main');
  });

  it("takes the harness's own word first, and refuses a word that is no purpose", () => {
    expect(callPurpose({ 'x-alight-purpose': 'compression' }, { messages: [] })).toBe('compression');
    expect(callPurpose({ 'x-alight-purpose': ' main ' }, asking('next_speaker'))).toBe('main');
    expect(() => callPurpose({ 'x-alight-purpose': 'judge' }, { messages: [] })).toThrow(
      /x-alight-purpose: "judge" is not a purpose \(one of main, router, next-speaker, loop-check, compression, side\)/,
    );
  });
});
