import { z } from 'zod';

export const judgeModes = ['group', 'single'] as const;
export type JudgeMode = (typeof judgeModes)[number];

/** reward.judge: a model that scores rollouts against a rubric (docs/rewards.md). */
const judge = z
  .object({
    url: z.string().url().describe("the judge's OpenAI-compatible base URL (…/v1); loopback or a hosted API"),
    model: z.string().default('judge').describe('the model name sent to the judge'),
    apiKeyEnv: z
      .string()
      .optional()
      .describe("the environment variable that holds the judge's API key (never the key itself: configs get shared)"),
    rubric: z
      .string()
      .default('Score how well the agent completed the task: 1 for complete and correct, 0 for no progress.')
      .describe('what a good trajectory is: the text, or a file that holds it'),
    mode: z
      .enum(judgeModes)
      .default('group')
      .describe("group: a task's n rollouts in one call, scored side by side; single: one call per rollout"),
    min: z.number().default(0).describe('the lowest score'),
    max: z.number().default(1).describe('the highest score'),
    timeoutS: z.number().positive().default(120).describe('seconds before a judge call fails its rollouts'),
    retries: z.number().int().min(0).default(1).describe('calls again after an answer that cannot be read'),
    concurrency: z.number().int().positive().default(4).describe('judge calls in flight at most'),
    maxTokens: z.number().int().positive().default(1024).describe("the judge's answer, in tokens at most"),
    structured: z
      .boolean()
      .default(true)
      .describe(
        "asks for the answer's JSON schema (response_format: vLLM, OpenAI and alight serve sample to it); " +
          'false for an endpoint that refuses it',
      ),
    budgetTokens: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("the judge's tokens a command may spend (prompt and answer); then it stops with an error"),
    deadlineS: z
      .number()
      .positive()
      .optional()
      .describe(
        "seconds a group's last rollouts have once the rest ended; then they are stopped and left out, and the " +
          'group is judged without them',
      ),
    cache: z
      .boolean()
      .default(true)
      .describe('a group judged before (same content, rubric and judge) is not asked again'),
  })
  .strict();

/** reward.*: how a rollout's reward is made from its verifiable reward and, when set, a judge's score. */
export const reward = z
  .object({
    judge: judge.optional(),
    weights: z
      .object({
        verifiable: z.number().min(0).default(0).describe("the harness's (or reward command's) reward"),
        judge: z.number().min(0).default(1).describe("the judge's score"),
      })
      .strict()
      .default({ verifiable: 0, judge: 1 })
      .describe('with a judge, the reward is verifiable × weight + judge × weight (both kept as their own rows)'),
  })
  .strict();

export type RewardConfig = z.infer<typeof reward>;
export type JudgeConfig = NonNullable<RewardConfig['judge']>;
