/** What a set-up step reports as it goes: a line of what it is doing, or a download's bytes so far. */
export type SetupEvent =
  | { type: 'step'; message: string }
  | { type: 'download'; file: string; done: number; total: number }
  | { type: 'download-end'; file: string };

export type SetupListener = (event: SetupEvent) => void;

export const MB = 1024 * 1024;
/** Downloads smaller than this are not worth a progress line. */
export const PROGRESS_MIN_BYTES = 5 * MB;

/**
 * Set-up progress as lines for logs and pipes: each step, and each download over 5 MB at its start and at every
 * quarter, so a long download shows it is moving without thousands of lines.
 */
export function asLines(write: (line: string) => void): SetupListener {
  const quarters = new Map<string, number>();
  return (e) => {
    if (e.type === 'step') return write(e.message);
    if (e.type !== 'download' || e.total < PROGRESS_MIN_BYTES) return;
    const q = Math.floor((4 * e.done) / e.total);
    if (quarters.has(e.file) && q <= quarters.get(e.file)!) return;
    quarters.set(e.file, q);
    write(`  ${e.file}: ${Math.round(e.done / MB)}/${Math.round(e.total / MB)} MB`);
  };
}
