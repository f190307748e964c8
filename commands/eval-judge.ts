import { withOverrides } from '../src/config/load.js';
import { AlightError, ExitCode } from '../src/errors.js';
import { type RejudgeSummary, rejudgeRun } from '../src/judge/rejudge.js';
import { judgeRun } from '../src/judge/rewards.js';
import { type JudgeFlags, printJson, rewardWithFlags, withStore } from './shared.js';

export interface EvalJudgeFlags extends JudgeFlags {
  db?: string;
  config?: string;
  json?: boolean;
}

/** `alight eval judge <run>`: a recorded run's rollouts scored by a judge; the scores, and beside a check, agreement. */
export async function evalJudgeCommand(run: string, flags: EvalJudgeFlags): Promise<RejudgeSummary> {
  return withStore(flags, async (store, fileConfig) => {
    const config = withOverrides(fileConfig, { reward: rewardWithFlags(fileConfig, flags) });
    const judge = judgeRun(config.reward);
    if (!judge)
      throw new AlightError('no judge: pass --judge <url> (or set reward.judge in the config)', ExitCode.usage);
    const summary = await rejudgeRun(store, judge, run);
    if (flags.json) printJson(summary);
    else process.stdout.write(render(summary));
    return summary;
  });
}

const fixed = (x: number | null, digits = 3): string => (x === null ? '—' : x.toFixed(digits));

function render(s: RejudgeSummary): string {
  const m = s.metrics;
  const lines = [
    `run ${s.run}: ${s.judged} of ${s.rollouts} rollouts judged, ${s.failed} judge-failed; ` +
      `mean judge score ${fixed(s.judgeMean)}`,
    `${m.judge_calls} judge calls, ${m.judge_cached_groups} groups from the cache, ${m.judge_tokens} tokens`,
  ];
  if (s.verifiable)
    lines.push(
      `beside the verifiable reward (${s.verifiable.rollouts} rollouts, mean ${fixed(s.verifiable.mean)}): ` +
        `Pearson r ${fixed(s.verifiable.pearson)}`,
    );
  lines.push(`scores: alight traces show <rollout> (the judge's explanation with each)`);
  return `${lines.join('\n')}\n`;
}
