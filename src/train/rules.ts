// The rules between a run's train settings, in one place: what the command refuses before anything starts, and what
// the run checks once the backend's plan is known. The schema (src/config/schema.ts) checks each key alone.
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type TrainConfig, trainsLora } from '../config/train-schema.js';
import { AlightError, ExitCode } from '../errors.js';
import { type VerlPlan, verlHost, verlPlan } from './verl-config.js';

/**
 * The run's train settings, checked before anything starts. verl: the cluster and model are checked too, and rows come
 * in multiples of the data-parallel size.
 */
export function checkedTrainConfig(train: TrainConfig): { c: TrainConfig; plan: VerlPlan | null } {
  const plan = train.backend === 'verl' ? verlPlan(train, verlHost(train, null)) : null;
  const c = plan
    ? { ...train, batch: { ...train.batch, rowMultiple: train.batch.rowMultiple ?? plan.worldSize } }
    : train;
  const refuse = (message: string): never => {
    throw new AlightError(message, ExitCode.usage);
  };
  if (plan && c.batch.rowMultiple! % plan.worldSize !== 0)
    refuse(
      `train.batch.rowMultiple (${c.batch.rowMultiple}) must be a multiple of the ${plan.worldSize} GPUs: each gets whole rows`,
    );
  if (!c.model) refuse('no model: pass --model <Hugging Face model folder> or set train.model in alight.config.yaml');
  if (c.vllm.serve && c.backend === 'verl')
    refuse('--serve-vllm is for the torch backend: verl serves the policy with vLLM already');
  if (c.vllm.device && !c.vllm.serve && c.backend !== 'verl')
    refuse('--device chooses the vLLM of --serve-vllm (or where verl runs): pass both, or neither');
  if (!c.distill.taskReward && !(c.distill.teacher && c.distill.coef > 0))
    refuse('--task-reward off leaves nothing to learn from: pass a --teacher (and a --distill-coef above 0)');
  if (c.rollouts.asyncGroups > 0 && c.rollouts.asyncGroups < c.batch.size)
    refuse(
      `train.rollouts.asyncGroups (${c.rollouts.asyncGroups}) must be at least ` +
        `train.batch.size (${c.batch.size}): a step trains on batch.size groups`,
    );
  return { c, plan };
}

/** LoRA settings the chosen backend or engine cannot honour, refused rather than ignored. */
export function refuseLoraUnsupported(train: TrainConfig): void {
  const { lora } = train;
  if (!trainsLora(train)) return;
  const adapterConfig = lora.from ? resolve(lora.from, 'adapter_config.json') : null;
  const refusals: [boolean, string][] = [
    [
      adapterConfig !== null && !existsSync(adapterConfig),
      `--lora-from ${lora.from}: no LoRA adapter there (adapter_config.json)`,
    ],
    [
      (train.vllm.serve || train.backend === 'verl') && adaptsOutput(lora.targets, adapterConfig),
      'an adapter on lm_head is served by the torch worker alone: vLLM drops its delta from prompt logprobs ' +
        '(vLLM #51594), so the served policy would not be the trained one; leave lm_head out of --lora-targets',
    ],
    [train.backend === 'verl' && lora.dropout > 0, "verl's LoRA has no dropout setting: leave out --lora-dropout"],
    [
      train.backend === 'verl' && lora.rank === 0,
      "verl needs the adapter's rank to continue it: pass --lora-rank with --lora-from",
    ],
  ];
  const refusal = refusals.find(([applies]) => applies)?.[1];
  if (refusal) throw new AlightError(refusal, ExitCode.usage);
}

/** Whether the adapter trained (a new one's targets, or the continued one's) includes the output layer. */
function adaptsOutput(targets: string, adapterConfig: string | null): boolean {
  if (adapterConfig === null) return targets.split(',').some((t) => t.trim() === 'lm_head');
  if (!existsSync(adapterConfig)) return false; // refused for that already
  const saved = JSON.parse(readFileSync(adapterConfig, 'utf8')) as { target_modules?: string[] | string };
  return [saved.target_modules ?? []].flat().includes('lm_head');
}
