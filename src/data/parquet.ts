import { closeSync, openSync, readSync, statSync } from 'node:fs';
import {
  type AsyncBuffer,
  asyncBufferFromFile,
  type FileMetaData,
  parquetMetadataAsync,
  parquetReadObjects,
  parquetSchema,
} from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { AlightError, ExitCode } from '../errors.js';
import { checkedPages, columnChunks, DamagedPages, nullsFault } from './parquet-checks.js';

/** A row of a data file, or why the line could not be read; `line` is 1-based (the row number for JSON and Parquet). */
export type FileRow = { line: number; row: unknown } | { line: number; error: string };

/** Columns every SWE-bench-style export has; a Parquet file without them is refused before any row is read. */
const requiredColumns = ['instance_id', 'repo', 'patch', 'FAIL_TO_PASS'];

// What a string whose bytes are not UTF-8 reads as. Parquet's strings are UTF-8 by definition (pyarrow and Polars
// check it when writing), so such bytes mean a damaged page, or a writer that did not encode its text; either way
// they are never replaced with U+FFFD, and the row that holds one refuses the file (see plainRow).
const notUtf8 = Symbol('not UTF-8');
const utf8 = new TextDecoder('utf-8', { fatal: true });
const strict = (bytes: Uint8Array): string | typeof notUtf8 => {
  try {
    return utf8.decode(bytes);
  } catch {
    return notUtf8;
  }
};
const parsers = {
  stringFromBytes: (bytes: Uint8Array | undefined) => bytes && strict(bytes),
  jsonFromBytes: (bytes: Uint8Array | undefined) => {
    const text = bytes && strict(bytes);
    return typeof text === 'string' ? JSON.parse(text) : text;
  },
};

const damaged = (path: string, what: string): AlightError =>
  new AlightError(`${path} is a damaged Parquet file: ${what}`, ExitCode.input);

/**
 * The rows of a Parquet file, a row group at a time. A damaged file (cut short, a garbled footer, page header,
 * compressed page or value) is refused with what could not be read. A garbled page that still decodes to valid text
 * is caught by its CRC only, where the writer recorded one (pyarrow and Polars do not by default).
 */
export async function* parquetRows(path: string): AsyncGenerator<FileRow> {
  const { metadata, columns, file } = await readFooter(path, await asyncBufferFromFile(path));
  // One row group at a time: hyparquet decodes a group's columns from its start, so reading a group in slices would
  // decode it again for each; memory is bounded by the largest row group.
  let start = 0;
  for (const group of metadata.row_groups) {
    const end = start + Number(group.num_rows);
    const rows = await readGroup(path, { file, metadata, rowStart: start, rowEnd: end }, columns);
    const wrong =
      rows.length === end - start
        ? nullsFault(group, rows)
        : `${rows.length} rows decoded, its footer says ${end - start}`;
    if (wrong) throw damaged(path, `rows ${start + 1}..${end}: ${wrong}`);
    for (let i = 0; i < rows.length; i++) yield plainRow(path, start + i + 1, rows[i]);
    start = end;
  }
}

/** The footer: the schema, the row groups and where each column's pages are; refused unless it reads whole. */
async function readFooter(path: string, file: AsyncBuffer) {
  const [head, tail] = ends(path);
  if (head !== 'PAR1')
    throw new AlightError(`${path} is not a Parquet file (it does not begin with PAR1)`, ExitCode.input);
  if (tail !== 'PAR1')
    throw new AlightError(`${path} is cut short or not a Parquet file (it does not end with PAR1)`, ExitCode.input);
  let metadata: FileMetaData;
  let columns: string[];
  try {
    // GeoParquet's marking walks the schema by its children counts: a negative one (a garbled footer) loops forever.
    metadata = await parquetMetadataAsync(file, { geoparquet: false });
    columns = parquetSchema(metadata).children.map((c) => c.element.name);
  } catch {
    // hyparquet's own words here are a thrift decoder's or a TypeError's, which say nothing to whoever has the file
    throw damaged(path, 'its footer (the schema and where the rows are) cannot be read');
  }
  const chunks = columnChunks(metadata, file.byteLength);
  if (!chunks) throw damaged(path, 'its footer places columns outside the file');
  const grouped = metadata.row_groups.reduce((n, g) => n + Number(g.num_rows), 0);
  if (grouped !== Number(metadata.num_rows))
    throw damaged(path, `its footer counts ${metadata.num_rows} rows, its row groups ${grouped}`);
  const missing = requiredColumns.filter((c) => !columns.includes(c));
  if (missing.length) {
    throw new AlightError(
      `${path} lacks the column(s) ${missing.join(', ')} (it has: ${columns.join(', ')}); not a SWE-bench-style export`,
      ExitCode.input,
    );
  }
  const codecs = metadata.row_groups.flatMap((g) => g.columns.map((c) => c.meta_data?.codec));
  const unread = codecs.find((c) => c && c !== 'UNCOMPRESSED' && !(c in compressors));
  if (unread)
    throw new AlightError(
      `${path} is compressed with ${unread}, which alight cannot read: write it with zstd or snappy`,
      ExitCode.input,
    );
  return { metadata, columns, file: checkedPages(file, chunks) };
}

/** The file's first and last four bytes, as text. */
function ends(path: string): [string, string] {
  const size = statSync(path).size;
  const bytes = Buffer.alloc(8);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, bytes, 0, 4, 0);
    if (size >= 8) readSync(fd, bytes, 4, 4, size - 4);
  } finally {
    closeSync(fd);
  }
  return [bytes.toString('latin1', 0, 4), bytes.toString('latin1', 4, 8)];
}

type Range = { file: AsyncBuffer; metadata: FileMetaData; rowStart: number; rowEnd: number };

/** A row group's rows; when it cannot be decoded, each column is read alone to name the damaged one. */
async function readGroup(path: string, range: Range, columns: string[]): Promise<Record<string, unknown>[]> {
  // ZSTD (Polars' default), GZIP, Brotli and LZ4 besides hyparquet's built-in Snappy.
  const read = (only?: string[]) => parquetReadObjects({ ...range, columns: only, compressors, parsers });
  try {
    return await read();
  } catch (err) {
    const rows = `rows ${range.rowStart + 1}..${range.rowEnd}`;
    if (err instanceof DamagedPages) throw damaged(path, `column ${err.column} of ${rows}: ${err.message}`);
    let culprit: string | undefined;
    for (const column of columns) {
      culprit = await read([column]).then(
        () => undefined,
        () => column,
      );
      if (culprit) break;
    }
    throw damaged(path, `${culprit ? `column ${culprit} of ${rows}` : rows} cannot be decoded`);
  }
}

class NotUtf8Error extends Error {}

function plainRow(path: string, line: number, row: Record<string, unknown>): FileRow {
  const out: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(row)) {
    try {
      out[column] = plain(value);
    } catch (err) {
      if (err instanceof NotUtf8Error)
        throw damaged(
          path,
          `row ${line}, column ${column} is not UTF-8 text (a garbled page, or bytes written as text)`,
        );
      // the stack, on a 100,000-deep list
      if (err instanceof RangeError) return { line, error: 'a value nests too deep to read' };
      throw err;
    }
  }
  return { line, row: out };
}

/** Parquet gives bigints for int64 and Dates for timestamps: make them JSON values. */
function plain(value: unknown): unknown {
  if (value === notUtf8) throw new NotUtf8Error();
  if (typeof value === 'bigint') return Number(value);
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}
