import type { RolloutMode } from '../rollouts/state.js';

export interface HarnessEnvInput {
  gatewayUrl: string;
  token: string;
  rolloutId: string;
  run: string;
  taskId: string | null;
  mode: RolloutMode;
  task: Record<string, unknown> | null;
}

/**
 * The harness contract (docs/design.md#harness-contract): everything a harness needs, and nothing that grants more than
 * its rollout. A local harness gets these on top of this process's environment (less the withheld variables); a pod
 * gets these only.
 */
export function harnessEnv(input: HarnessEnvInput): Record<string, string> {
  const url = `${input.gatewayUrl}/r/${input.token}`;
  return {
    OPENAI_BASE_URL: `${url}/v1`,
    OPENAI_API_BASE: `${url}/v1`,
    OPENAI_API_KEY: input.token,
    // Anthropic's SDKs and Claude Code add /v1 themselves (the AI SDK adds /messages: the gateway serves both). One key
    // variable: with ANTHROPIC_AUTH_TOKEN too, Anthropic's Python SDK warns on every client it makes.
    ANTHROPIC_BASE_URL: url,
    ANTHROPIC_API_KEY: input.token,
    // Google's GenAI SDKs and Gemini CLI: the base URL (they add /v1beta/models/…) and the key they send.
    GOOGLE_GEMINI_BASE_URL: url,
    GEMINI_API_KEY: input.token,
    ALIGHT_URL: url,
    ALIGHT_REWARD_URL: `${url}/reward`,
    ALIGHT_EVENT_URL: `${url}/events`,
    ALIGHT_ROLLOUT_ID: input.rolloutId,
    ALIGHT_RUN: input.run,
    ALIGHT_TASK_ID: input.taskId ?? '',
    ALIGHT_MODE: input.mode,
    ALIGHT_TASK_JSON: JSON.stringify(input.task),
  };
}

/**
 * What no harness may see: the admin key, the upstream API key's variable when the config names one, and this shell's
 * Anthropic bearer token and Google API key (the contract's ANTHROPIC_API_KEY and GEMINI_API_KEY are the harness's
 * credentials; a client seeing the others would send them, real keys, to the gateway).
 */
export function withheldVars(upstream: { apiKeyEnv?: string }): string[] {
  return [
    'ALIGHT_ADMIN_KEY',
    'ANTHROPIC_AUTH_TOKEN',
    // Google's SDKs prefer GOOGLE_API_KEY to GEMINI_API_KEY: a real one of this shell would reach the gateway.
    'GOOGLE_API_KEY',
    ...(upstream.apiKeyEnv ? [upstream.apiKeyEnv] : []),
  ];
}
