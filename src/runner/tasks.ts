import { readFileSync } from 'node:fs';
import { AlightError, ExitCode } from '../errors.js';

export interface Task {
  id: string;
  data: Record<string, unknown>;
}

/** Reads a JSONL task file; `id` or `instance_id` names each task. Every bad line is reported, with its number. */
export function readTasks(path: string): Task[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new AlightError(`cannot read the task file ${path}: ${(err as Error).message}`, ExitCode.input);
  }
  const tasks: Task[] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const [i, line] of text.split('\n').entries()) {
    if (!line.trim()) continue;
    let data: unknown;
    try {
      data = JSON.parse(line);
    } catch (err) {
      problems.push(`line ${i + 1}: not JSON (${(err as Error).message})`);
      continue;
    }
    const problem = lineProblem(data, seen);
    if (problem) {
      problems.push(`line ${i + 1}: ${problem}`);
      continue;
    }
    const obj = data as Record<string, unknown>;
    const key = String(obj.id ?? obj.instance_id);
    seen.add(key);
    tasks.push({ id: key, data: obj });
  }
  if (problems.length) {
    const shown = problems.slice(0, 10).join('\n  ');
    const more = problems.length > 10 ? `\n  … and ${problems.length - 10} more` : '';
    throw new AlightError(`invalid task file ${path}:\n  ${shown}${more}`, ExitCode.input);
  }
  if (tasks.length === 0) throw new AlightError(`the task file ${path} has no tasks`, ExitCode.input);
  return tasks;
}

/** Why a parsed task line is not a task, or null. */
function lineProblem(data: unknown, seen: Set<string>): string | null {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return 'not a JSON object';
  const id = (data as Record<string, unknown>).id ?? (data as Record<string, unknown>).instance_id;
  if (typeof id !== 'string' && typeof id !== 'number') return 'no "id" or "instance_id"';
  return seen.has(String(id)) ? `duplicate task id ${id}` : null;
}
