import { closeSync, openSync, readSync } from 'node:fs';

/** A file's first `bytes` bytes as latin1 text: its magic number (`GGUF`, `PAR1`), whatever its name says. */
export function fileMagic(path: string, bytes = 4): string {
  const head = Buffer.alloc(bytes);
  const fd = openSync(path, 'r');
  try {
    const read = readSync(fd, head, 0, bytes, 0);
    return head.subarray(0, read).toString('latin1');
  } finally {
    closeSync(fd);
  }
}
