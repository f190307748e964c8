/** The rollout lifecycle as data: the gateway's PATCH route and the runner both go through `canTransition`. */
export const rolloutStates = ['queued', 'running', 'succeeded', 'failed'] as const;
export type RolloutState = (typeof rolloutStates)[number];

export const transitions: Record<RolloutState, readonly RolloutState[]> = {
  queued: ['running', 'failed'],
  running: ['succeeded', 'failed'],
  succeeded: [],
  failed: [],
};

export function isTerminal(state: RolloutState): boolean {
  return transitions[state].length === 0;
}

export function canTransition(from: RolloutState, to: RolloutState): boolean {
  return transitions[from].includes(to);
}

export const rolloutModes = ['record', 'train', 'val'] as const;
export type RolloutMode = (typeof rolloutModes)[number];

// A failure that was the infrastructure's, not the harness's, starts with this: such a rollout is retried and never
// trained on, whatever `failedRollouts` says.
const infraPrefix = 'infrastructure: ';

export function infraFailure(reason: string): string {
  return `${infraPrefix}${reason}`;
}

export function isInfraFailure(error: string | null): boolean {
  return error?.startsWith(infraPrefix) ?? false;
}
