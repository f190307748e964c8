import { withOverrides } from '../src/config/load.js';
import { type RejudgeSummary, rejudgeRun } from '../src/rewards/rejudge.js';
import { renderRejudge } from '../src/ui/eval-report.js';
import { printJson, rewardWithFlags, withStore } from './shared.js';
import type { EvalJudgeFlags } from './table/declared-eval.js';

/** `alight eval judge <run>`: a recorded run's rollouts scored by a judge; the scores, and beside a check, agreement. */
export async function evalJudgeCommand(run: string, flags: EvalJudgeFlags): Promise<RejudgeSummary> {
  return withStore(flags, async (store, fileConfig) => {
    const config = withOverrides(fileConfig, { reward: rewardWithFlags(fileConfig, flags) });
    const summary = await rejudgeRun(store, config.reward, run);
    if (flags.json) printJson(summary);
    else process.stdout.write(renderRejudge(summary));
    return summary;
  });
}
