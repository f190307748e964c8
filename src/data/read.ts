import { closeSync, createReadStream, openSync, readSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects, parquetSchema } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { AlightError, ExitCode } from '../errors.js';
import { maxJsonDepth, nestedDeeperThan } from '../json-depth.js';

/** A row of a data file, or why the line could not be read; `line` is 1-based (the row number for JSON and Parquet). */
export type FileRow = { line: number; row: unknown } | { line: number; error: string };

// V8's longest string is ~512 MiB of UTF-16 code units: a JSON document must be parsed from one string.
const jsonFileLimit = 256 * 2 ** 20;
/** Columns every SWE-bench-style export has; a Parquet file without them is refused before any row is read. */
export const requiredColumns = ['instance_id', 'repo', 'patch', 'FAIL_TO_PASS'];

/**
 * The rows of a JSONL, JSON (a list, a dict of rows, or pandas' column-oriented dict) or Parquet file. JSONL streams
 * in constant memory, Parquet a row group at a time; a JSON document must be read whole, so one over 256 MiB is
 * refused.
 */
export function readRows(path: string): AsyncGenerator<FileRow> {
  if (/\.parquet$/i.test(path)) return parquetRows(path);
  if (/\.json$/i.test(path)) return jsonRows(path);
  return jsonlRows(path);
}

/** The largest row alight reads: larger ones (a 300 MB statement) are kept aside as invalid, never parsed. */
export const maxRowBytes = 32 * 2 ** 20;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * JSONL read as bytes, split at newlines by hand: a line is decoded only when it is under the row cap (readline would
 * build any line as one string, and one over V8's limit kills the process), and decoded strictly (bytes that are not
 * UTF-8 make the row invalid rather than silently replaced).
 */
async function* jsonlRows(path: string): AsyncGenerator<FileRow> {
  refuseParquet(path);
  let parts: Buffer[] = [];
  let size = 0;
  let over = false;
  let n = 0;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    for (let start = 0; ; ) {
      const nl = chunk.indexOf(10, start);
      const end = nl < 0 ? chunk.length : nl;
      if (!over && size + end - start > maxRowBytes) {
        over = true;
        parts = [];
      }
      if (!over) {
        parts.push(chunk.subarray(start, end));
        size += end - start;
      }
      if (nl < 0) break;
      const row = lineRow(++n, over ? null : Buffer.concat(parts, size));
      if (row) yield row;
      [parts, size, over, start] = [[], 0, false, nl + 1];
    }
  }
  const last = size > 0 || over ? lineRow(++n, over ? null : Buffer.concat(parts, size)) : null;
  if (last) yield last;
}

function lineRow(n: number, bytes: Buffer | null): FileRow | null {
  if (bytes === null)
    return { line: n, error: `longer than ${maxRowBytes / 2 ** 20} MiB: not read (rows must be smaller)` };
  let text: string;
  try {
    text = utf8.decode(bytes); // a byte-order mark is dropped by the decoder, not part of the first row
  } catch {
    return { line: n, error: 'not valid UTF-8' };
  }
  if (!text.trim()) return null;
  if (nestedDeeperThan(text, maxJsonDepth))
    return { line: n, error: `nests arrays and objects deeper than ${maxJsonDepth} levels` };
  try {
    return { line: n, row: JSON.parse(text) };
  } catch (err) {
    return { line: n, error: `not JSON (${(err as Error).message}; a truncated line?)` };
  }
}

/** A Parquet file under another name would read as thousands of invalid rows: say what it is instead. */
function refuseParquet(path: string): void {
  const head = Buffer.alloc(4);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, head, 0, 4, 0);
  } finally {
    closeSync(fd);
  }
  if (head.toString('latin1') === 'PAR1')
    throw new AlightError(`${path} is a Parquet file: name it .parquet`, ExitCode.input);
}

async function* jsonRows(path: string): AsyncGenerator<FileRow> {
  const size = statSync(path).size;
  if (size > jsonFileLimit) {
    throw new AlightError(
      `${path} is ${(size / 2 ** 20).toFixed(0)} MiB of JSON, which must be read whole ` +
        '(at most 256 MiB); convert it to JSONL (one row a line) or Parquet, which stream',
      ExitCode.input,
    );
  }
  let doc: unknown;
  try {
    doc = JSON.parse((await readFile(path, 'utf8')).replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new AlightError(`${path} is not valid JSON: ${(err as Error).message}`, ExitCode.input);
  }
  const rows = Array.isArray(doc) ? doc : isObject(doc) ? dictRows(doc) : null;
  if (!rows) throw new AlightError(`${path}: expected a JSON list of rows or a dict of them`, ExitCode.input);
  for (let i = 0; i < rows.length; i++) yield { line: i + 1, row: rows[i] };
}

/** `{id: row, …}`, or pandas' `to_json()` default `{column: {index: value}}`, as a list of rows. */
function dictRows(doc: Record<string, unknown>): unknown[] {
  const values = Object.values(doc);
  const columnar = 'instance_id' in doc && isObject(doc.instance_id);
  if (!columnar) return values;
  const index = Object.keys(doc.instance_id as object);
  return index.map((i) =>
    Object.fromEntries(Object.entries(doc).map(([col, cells]) => [col, (cells as Record<string, unknown>)[i]])),
  );
}

async function* parquetRows(path: string): AsyncGenerator<FileRow> {
  const file = await asyncBufferFromFile(path);
  let metadata: Awaited<ReturnType<typeof parquetMetadataAsync>>;
  try {
    metadata = await parquetMetadataAsync(file);
  } catch (err) {
    throw new AlightError(`${path} is not a Parquet file: ${(err as Error).message}`, ExitCode.input);
  }
  const columns = parquetSchema(metadata).children.map((c) => c.element.name);
  const missing = requiredColumns.filter((c) => !columns.includes(c));
  if (missing.length) {
    throw new AlightError(
      `${path} lacks the column(s) ${missing.join(', ')} (it has: ${columns.join(', ')}); not a SWE-bench-style export`,
      ExitCode.input,
    );
  }
  // One row group at a time: hyparquet decodes a group's columns from its start, so reading a group in slices would
  // decode it again for each; memory is bounded by the largest row group.
  let start = 0;
  for (const group of metadata.row_groups) {
    const end = start + Number(group.num_rows);
    let rows: Record<string, unknown>[];
    try {
      // ZSTD (Polars' default), GZIP, Brotli and LZ4 besides hyparquet's built-in Snappy.
      rows = await parquetReadObjects({ file, metadata, rowStart: start, rowEnd: end, compressors });
    } catch (err) {
      throw new AlightError(
        `cannot read rows ${start + 1}..${end} of ${path}: ${(err as Error).message}`,
        ExitCode.input,
      );
    }
    for (let i = 0; i < rows.length; i++) yield plainRow(start + i + 1, rows[i]);
    start = end;
  }
}

function plainRow(line: number, row: Record<string, unknown>): FileRow {
  try {
    return { line, row: plain(row) };
  } catch (err) {
    // the stack, on a 100,000-deep list
    if (err instanceof RangeError) return { line, error: 'a value nests too deep to read' };
    throw err;
  }
}

/** Parquet gives bigints for int64 and Dates for timestamps: make them JSON values. */
function plain(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(plain);
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Every row of a data file, failing on the first unreadable one with its file and line (for inputs that must be whole).
 */
export async function readAllRows(path: string): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  for await (const item of readRows(path)) {
    if ('error' in item) throw new AlightError(`${path}:${item.line}: ${item.error}`, ExitCode.input);
    rows.push(item.row as Record<string, unknown>);
  }
  return rows;
}
