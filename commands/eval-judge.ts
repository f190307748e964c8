import { withOverrides } from '../src/config/load.js';
import { AlightError, ExitCode } from '../src/errors.js';
import { type RejudgeSummary, rejudgeRun } from '../src/judge/rejudge.js';
import { judgeRun } from '../src/judge/rewards.js';
import { renderRejudge } from '../src/ui/eval-report.js';
import { printJson, rewardWithFlags, withStore } from './shared.js';
import type { EvalJudgeFlags } from './table/declared-eval.js';

/** `alight eval judge <run>`: a recorded run's rollouts scored by a judge; the scores, and beside a check, agreement. */
export async function evalJudgeCommand(run: string, flags: EvalJudgeFlags): Promise<RejudgeSummary> {
  return withStore(flags, async (store, fileConfig) => {
    const config = withOverrides(fileConfig, { reward: rewardWithFlags(fileConfig, flags) });
    const judge = judgeRun(config.reward);
    if (!judge)
      throw new AlightError('no judge: pass --judge <url> (or set reward.judge in the config)', ExitCode.usage);
    const summary = await rejudgeRun(store, judge, run);
    if (flags.json) printJson(summary);
    else process.stdout.write(renderRejudge(summary));
    return summary;
  });
}
