import { AlightError, ExitCode } from '../errors.js';

/**
 * Replaces `{{field}}` and `{{a.b}}` in one argument with the task's values; no shell is involved. `where` names what
 * holds the placeholder, for the error.
 */
export function substitute(arg: string, task: Record<string, unknown>, where = 'the command'): string {
  return arg.replace(/\{\{\s*([\w.-]+)\s*\}\}/g, (_, path: string) => {
    let value: unknown = task;
    for (const key of path.split('.')) value = (value as Record<string, unknown> | null | undefined)?.[key];
    if (value === undefined || value === null) {
      throw new AlightError(
        `${where} uses {{${path}}} but task ${String(task.id ?? task.instance_id)} has no such field`,
        ExitCode.input,
      );
    }
    return typeof value === 'string' ? value : JSON.stringify(value);
  });
}
