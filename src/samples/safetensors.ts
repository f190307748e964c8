import { closeSync, fstatSync, openSync, readFileSync, readSync, renameSync, writeSync } from 'node:fs';

/** The typed arrays a batch file holds, by safetensors dtype name. */
export type Tensor = Int32Array | BigInt64Array | Uint8Array | Float32Array;
const dtypes = new Map<string, string>([
  ['Int32Array', 'I32'],
  ['BigInt64Array', 'I64'],
  ['Uint8Array', 'U8'],
  ['Float32Array', 'F32'],
]);

/**
 * Writes tensors (1-D, in the given order) in the safetensors format: an 8-byte little-endian header length, a JSON
 * header padded with spaces to 8 bytes, then the raw little-endian data.
 */
export function writeSafetensors(
  path: string,
  tensors: Record<string, Tensor>,
  metadata: Record<string, string>,
): void {
  const header: Record<string, unknown> = { __metadata__: metadata };
  let offset = 0;
  for (const [name, t] of Object.entries(tensors)) {
    header[name] = {
      dtype: dtypes.get(t.constructor.name),
      shape: [t.length],
      data_offsets: [offset, offset + t.byteLength],
    };
    offset += t.byteLength;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (Buffer.byteLength(json) % 8)) % 8);
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
  // Written aside, then renamed: a reader (the trainer, alight ui) never sees a file half written.
  const fd = openSync(`${path}.partial`, 'w');
  try {
    writeSync(fd, length);
    writeSync(fd, json);
    for (const t of Object.values(tensors)) writeSync(fd, new Uint8Array(t.buffer, t.byteOffset, t.byteLength));
  } finally {
    closeSync(fd);
  }
  renameSync(`${path}.partial`, path);
}

export interface SafetensorsFile {
  tensors: Record<string, Tensor>;
  metadata: Record<string, string>;
}

const constructors: Record<string, { new (buffer: ArrayBuffer): Tensor; BYTES_PER_ELEMENT: number }> = {
  I32: Int32Array,
  I64: BigInt64Array,
  U8: Uint8Array,
  F32: Float32Array,
};

type Header = Record<string, { dtype: string; data_offsets: [number, number] }>;

/** The JSON header of a safetensors file at the start of `bytes` (8-byte length, then the JSON), and its length. */
function parseHeader(path: string, bytes: Buffer): { header: Header; length: number } {
  if (bytes.length < 8) throw new Error(`${path} is not a safetensors file (too short)`);
  const length = Number(bytes.readBigUInt64LE(0));
  if (8 + length > bytes.length) throw new Error(`${path} is not a safetensors file (header past the end)`);
  return { header: JSON.parse(bytes.subarray(8, 8 + length).toString('utf8')) as Header, length };
}

/** Only a safetensors file's metadata: its header read without the tensors. */
export function readSafetensorsMetadata(path: string): Record<string, string> {
  const fd = openSync(path, 'r');
  try {
    const size = Buffer.alloc(8);
    const length = readSync(fd, size, 0, 8, 0) === 8 ? Number(size.readBigUInt64LE(0)) : -1;
    if (length < 0 || length > fstatSync(fd).size - 8) throw new Error(`${path} is not a whole safetensors file`);
    const bytes = Buffer.alloc(8 + length);
    if (readSync(fd, bytes, 0, bytes.length, 0) !== bytes.length) throw new Error(`${path} was cut short`);
    return (parseHeader(path, bytes).header.__metadata__ ?? {}) as unknown as Record<string, string>;
  } finally {
    closeSync(fd);
  }
}

/** Reads a file written by `writeSafetensors` (or any 1-D safetensors file of those dtypes). */
export function readSafetensors(path: string): SafetensorsFile {
  const bytes = readFileSync(path);
  const { header, length } = parseHeader(path, bytes);
  const data = 8 + length;
  const tensors: Record<string, Tensor> = {};
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const Ctor = constructors[entry.dtype];
    if (!Ctor) throw new Error(`${path}: tensor ${name} has dtype ${entry.dtype}, which alight does not read`);
    const [begin, end] = entry.data_offsets;
    if (!(begin <= end && data + end <= bytes.length)) throw new Error(`${path}: tensor ${name} lies past the end`);
    // Copied into an aligned buffer of its own.
    tensors[name] = new Ctor(
      bytes.buffer.slice(bytes.byteOffset + data + begin, bytes.byteOffset + data + end) as ArrayBuffer,
    );
  }
  return { tensors, metadata: (header.__metadata__ ?? {}) as unknown as Record<string, string> };
}
