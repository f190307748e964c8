import { endianness } from 'node:os';

// BLOBs are little-endian (docs/design.md#storage); typed arrays use the host order, so refuse to run where they
// differ.
if (endianness() !== 'LE')
  throw new Error('alight stores token ids as little-endian int32 and needs a little-endian host');

export function encodeInt32(values: ArrayLike<number>): Buffer {
  const arr = values instanceof Int32Array ? values : Int32Array.from(values);
  return Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength);
}

export function encodeFloat32(values: ArrayLike<number>): Buffer {
  const arr = values instanceof Float32Array ? values : Float32Array.from(values);
  return Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength);
}

export function decodeInt32(blob: Buffer): Int32Array {
  // Copy: SQLite's buffer may not be 4-byte aligned.
  const copy = new Uint8Array(blob);
  return new Int32Array(copy.buffer, 0, copy.byteLength / 4);
}

export function decodeFloat32(blob: Buffer): Float32Array {
  const copy = new Uint8Array(blob);
  return new Float32Array(copy.buffer, 0, copy.byteLength / 4);
}

/** Length of the common prefix of two token sequences, by memcmp: whole-prefix checks first, then bisection. */
export function commonTokenPrefix(a: Int32Array, b: Int32Array): number {
  const bytes = (x: Int32Array, n: number): Buffer => Buffer.from(x.buffer, x.byteOffset, n * 4);
  let lo = 0;
  let hi = Math.min(a.length, b.length);
  if (bytes(a, hi).equals(bytes(b, hi))) return hi;
  // Invariant: the first lo tokens agree, the first hi do not.
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (bytes(a, mid).equals(bytes(b, mid))) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** Length of the common prefix of two sequences. */
export function commonPrefix<T>(a: ArrayLike<T>, b: ArrayLike<T>): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}
