import { AlightError, ExitCode } from '../errors.js';
import { run } from '../process/launch.js';
import type { SetupListener } from './events.js';

/**
 * Runs one install command, turning pip's `Downloading NAME (SIZE)` and `--progress-bar raw` lines (`Progress N of
 * M`, bytes) into download events; any other line is kept for the error. A failure is an AlightError with the
 * command's last lines and `hint`.
 */
export async function runInstall(cmd: string, args: string[], listener: SetupListener, hint = ''): Promise<void> {
  const tail: string[] = [];
  let file = '';
  const onLine = (line: string): void => {
    const progress = /^Progress (\d+) of (\d+)$/.exec(line);
    if (progress && file) {
      listener({ type: 'download', file, done: Number(progress[1]), total: Number(progress[2]) });
      if (progress[1] === progress[2]) listener({ type: 'download-end', file });
      return;
    }
    const downloading = /^\s*Downloading (\S+)/.exec(line);
    if (downloading) file = downloading[1].replace(/^.*\//, '');
    tail.push(line);
    if (tail.length > 12) tail.shift();
  };
  const r = await run({ command: cmd, args, stdout: { lines: onLine }, stderr: { lines: onLine } });
  if (r.reason) tail.push(r.reason);
  const code = r.exitCode;
  if (code !== 0) {
    throw new AlightError(
      `${cmd} ${args.join(' ')} failed (${code ?? 'could not start'}):\n${tail.join('\n')}${hint ? `\n${hint}` : ''}`,
      ExitCode.failure,
    );
  }
}
