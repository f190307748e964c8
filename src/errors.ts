/** Exit codes are part of the CLI's interface: scripts branch on them. */
export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
  input: 3,
  interrupted: 130,
} as const;
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** An error the user can act on: the message says what failed and what to do; the CLI prints it without a stack. */
export class AlightError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCodeValue = ExitCode.failure,
  ) {
    super(message);
    this.name = 'AlightError';
  }
}

/** The message of an error and of its causes (undici hides the useful part, e.g. ECONNREFUSED, in `cause`). */
export function errorMessage(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? errorMessage(err.cause) : null;
  return cause && !err.message.includes(cause) ? `${err.message} (${cause})` : err.message;
}
