// Types for verifier.mjs (the example stays plain JavaScript, runnable with node alone).
export function computeDecimalReward(answer: string | null | undefined, oracle: string): number;
export function finalAnswer(reply: string): string;
