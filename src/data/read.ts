import { createReadStream, existsSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { AlightError, ExitCode } from '../errors.js';
import { maxJsonDepth, nestedDeeperThan } from '../json-text.js';
import { fileMagic } from '../magic.js';
import { isRecord } from '../records.js';
import { type FileRow, parquetRows } from './parquet.js';

// V8's longest string is ~512 MiB of UTF-16 code units: a JSON document must be parsed from one string.
const jsonFileLimit = 256 * 2 ** 20;

/**
 * The rows of a JSONL, JSON (a list, a dict of rows, or pandas' column-oriented dict) or Parquet file. JSONL streams
 * in constant memory, Parquet a row group at a time; a JSON document must be read whole, so one over 256 MiB is
 * refused.
 *
 * Bytes that are not UTF-8 are never replaced: what holds them is refused. A JSONL line stands alone, so it is kept
 * aside as an invalid row; a JSON document is one value, and a Parquet page is decompressed and decoded whole (its
 * other rows cannot be trusted), so those files are refused.
 */
export function readRows(path: string): AsyncGenerator<FileRow> {
  checkDataFile(path);
  if (/\.parquet$/i.test(path)) return parquetRows(path);
  if (/\.json$/i.test(path)) return jsonRows(path);
  return jsonlRows(path);
}

/** A data file must be there and not a folder (a folder named x.jsonl would fail deep inside a reader). */
export function checkDataFile(path: string): void {
  if (!existsSync(path)) throw new AlightError(`no such file: ${path}`, ExitCode.input);
  if (statSync(path).isDirectory()) throw new AlightError(`${path} is a folder, not a file`, ExitCode.input);
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
  if (fileMagic(path) === 'PAR1') throw new AlightError(`${path} is a Parquet file: name it .parquet`, ExitCode.input);
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
  let text: string;
  try {
    text = utf8.decode(await readFile(path)); // a byte-order mark is dropped by the decoder
  } catch {
    throw new AlightError(
      `${path} is not UTF-8 text: save it as UTF-8 (a JSON document is read whole)`,
      ExitCode.input,
    );
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new AlightError(`${path} is not valid JSON: ${(err as Error).message}`, ExitCode.input);
  }
  const rows = Array.isArray(doc) ? doc : isRecord(doc) ? dictRows(doc) : null;
  if (!rows) throw new AlightError(`${path}: expected a JSON list of rows or a dict of them`, ExitCode.input);
  for (let i = 0; i < rows.length; i++) yield { line: i + 1, row: rows[i] };
}

/** `{id: row, …}`, or pandas' `to_json()` default `{column: {index: value}}`, as a list of rows. */
function dictRows(doc: Record<string, unknown>): unknown[] {
  const values = Object.values(doc);
  const columnar = 'instance_id' in doc && isRecord(doc.instance_id);
  if (!columnar) return values;
  const index = Object.keys(doc.instance_id as object);
  return index.map((i) =>
    Object.fromEntries(Object.entries(doc).map(([col, cells]) => [col, (cells as Record<string, unknown>)[i]])),
  );
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
