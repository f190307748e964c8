import type { SftResult } from '../train/sft.js';
import type { VerlPlan } from '../train/verl-config.js';

/** verl's overrides as comments, then the config verl composes of them, or what composing it needs. */
export const renderVerlOverrides = (overrides: string[], composed: string | null): string =>
  `# verl overrides:\n${overrides.map((o) => `#   ${o}`).join('\n')}\n` +
  (composed ?? '# (the composed config needs the verl virtualenv: alight doctor --setup --backend verl)\n');

/** `alight train --dry-run` on verl: the preset and its parallelism, then the overrides and the composed config. */
export const renderVerlPlan = (plan: VerlPlan, composed: string | null): string =>
  `# preset ${plan.preset}: ${plan.worldSize} GPU(s), vLLM tensor parallel ${plan.tensorParallel}\n` +
  renderVerlOverrides(plan.overrides, composed);

/** `alight sft`: the steps it took, its checkpoint, and how to go on to RL from it. */
export const renderSftResult = (result: SftResult): string =>
  `run ${result.run}: ${result.steps.length} steps; checkpoint ${result.checkpoint}\n` +
  `RL from it: alight train --init-from ${result.run} … -- <harness>\n`;
