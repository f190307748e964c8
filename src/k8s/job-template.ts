import { readFileSync } from 'node:fs';
import type { V1Job } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { AlightError, ExitCode, errorMessage } from '../errors.js';
import { substitute } from '../runner/template.js';

/**
 * A user's Job template: one batch/v1 Job in YAML whose strings may hold `{{field}}` placeholders for task fields.
 * Checked once when a run starts, so that a bad file fails it before any rollout.
 */
export function loadJobTemplate(path: string): V1Job {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new AlightError(`cannot read the Job template: ${errorMessage(err)}`, ExitCode.input);
  }
  const docs = parseAllDocuments(text).filter((d) => d.contents !== null);
  const bad = (why: string): AlightError => new AlightError(`the Job template ${path} ${why}`, ExitCode.input);
  if (docs.length !== 1) throw bad(`must hold exactly one YAML document (it has ${docs.length})`);
  if (docs[0].errors.length > 0) throw bad(`is not valid YAML: ${docs[0].errors[0].message}`);
  const job = docs[0].toJS() as V1Job;
  if (job?.apiVersion !== 'batch/v1' || job.kind !== 'Job')
    throw bad('must be a Job (apiVersion: batch/v1, kind: Job)');
  const containers = job.spec?.template?.spec?.containers;
  if (!Array.isArray(containers) || containers.length === 0)
    throw bad('must have at least one container in spec.template.spec.containers');
  if (containers.some((c) => typeof c?.name !== 'string')) throw bad('must name each of its containers');
  return job;
}

/**
 * The template for one task: each string's `{{field}}`s replaced by the task's values. The YAML was parsed before
 * anything was substituted, so a task's text can only ever become a string, never structure.
 */
export function fillTemplate<T>(value: T, task: Record<string, unknown>): T {
  if (typeof value === 'string') return substitute(value, task, 'the Job template') as T;
  if (Array.isArray(value)) return value.map((v) => fillTemplate(v, task)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillTemplate(v, task)])) as T;
  }
  return value;
}
