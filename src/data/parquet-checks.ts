import type { AsyncBuffer, FileMetaData, PageHeader, RowGroup } from 'hyparquet';
import { parquetHeader } from 'hyparquet/src/column.js';

/** A column chunk of a row group: where its pages lie in the file, and how many values they hold. */
interface Chunk {
  column: string;
  start: number;
  end: number;
  values: number;
}

/** The column chunks of every row group; null when one lies outside the file's data (a damaged footer). */
export function columnChunks(metadata: FileMetaData, fileSize: number): Chunk[] | null {
  const chunks: Chunk[] = [];
  for (const group of metadata.row_groups) {
    for (const { meta_data: meta } of group.columns) {
      if (!meta) return null;
      // as hyparquet reads it: some writers put 0 for "no dictionary page"
      const start = Number(meta.dictionary_page_offset || meta.data_page_offset);
      const end = start + Number(meta.total_compressed_size);
      if (!(start >= 4 && end >= start && end <= fileSize - 8)) return null;
      chunks.push({ column: meta.path_in_schema.join('.'), start, end, values: Number(meta.num_values) });
    }
  }
  return chunks;
}

/** A column chunk whose pages cannot be decoded: which, and why. */
export class DamagedPages extends Error {
  constructor(
    readonly column: string,
    why: string,
  ) {
    super(why);
  }
}

/**
 * `file`, with the page headers of each column chunk checked as hyparquet reads it, before hyparquet decodes them.
 * hyparquet trusts them: a header with a field missing makes it loop forever (its offset becomes NaN, which reads
 * byte 0 again and again), one with a negative count makes it allocate without end. A chunk found damaged rejects
 * the read with DamagedPages.
 */
export function checkedPages(file: AsyncBuffer, chunks: Chunk[]): AsyncBuffer {
  return {
    byteLength: file.byteLength,
    async slice(start, end = file.byteLength) {
      const bytes = await file.slice(start, end);
      for (const chunk of chunks) {
        if (chunk.start < start || chunk.end > end) continue;
        const why = pagesFault(new Uint8Array(bytes, chunk.start - start, chunk.end - chunk.start), chunk);
        if (why) throw new DamagedPages(chunk.column, why);
      }
      return bytes;
    },
  };
}

/** Why a column chunk's pages cannot be decoded (`bytes` are the chunk's), or null when their headers are sound. */
function pagesFault(bytes: Uint8Array, chunk: Chunk): string | null {
  const reader = { view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset: 0 };
  let values = 0;
  // Pages are read until they hold the chunk's values, as readers do (some writers leave bytes after the last).
  while (values < chunk.values) {
    const at = chunk.start + reader.offset;
    if (reader.offset >= bytes.length)
      return `its pages end at byte ${at} with ${values} of its ${chunk.values} values`;
    let header: PageHeader;
    try {
      header = parquetHeader(reader);
    } catch {
      return `the page header at byte ${at} cannot be read`;
    }
    if (!sound(header, bytes.length - reader.offset)) return `the page header at byte ${at} is damaged`;
    const page = bytes.subarray(reader.offset, reader.offset + header.compressed_page_size);
    // Some writers (parquet-mr, pyarrow when asked) record a page's CRC: the one check that catches a garbled
    // compressed page which still decompresses.
    if (header.crc !== undefined && crc32(page) !== header.crc >>> 0)
      return `the page at byte ${at} does not match its checksum`;
    reader.offset += header.compressed_page_size;
    values += header.data_page_header?.num_values ?? header.data_page_header_v2?.num_values ?? 0;
  }
  return values === chunk.values ? null : `its pages hold ${values} values, its footer says ${chunk.values}`;
}

const crcTable = Uint32Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c;
});

/** CRC-32 (IEEE, as zlib and Parquet compute it). */
function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = crcTable[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

const count = (n: unknown): boolean => Number.isInteger(n) && (n as number) >= 0;

/** Whether a page header has every field its type needs, in range, and fits in the `room` left in its chunk. */
function sound(h: PageHeader, room: number): boolean {
  if (!count(h.compressed_page_size) || h.compressed_page_size > room || !count(h.uncompressed_page_size)) return false;
  const v1 = h.data_page_header;
  const v2 = h.data_page_header_v2;
  const dictionary = h.dictionary_page_header;
  switch (h.type) {
    case 'DATA_PAGE':
      return Boolean(
        v1 && count(v1.num_values) && v1.encoding && v1.definition_level_encoding && v1.repetition_level_encoding,
      );
    case 'DATA_PAGE_V2':
      return Boolean(
        v2 &&
          count(v2.num_values) &&
          count(v2.num_nulls) &&
          count(v2.num_rows) &&
          v2.num_nulls <= v2.num_values &&
          v2.encoding &&
          count(v2.definition_levels_byte_length) &&
          count(v2.repetition_levels_byte_length) &&
          v2.definition_levels_byte_length + v2.repetition_levels_byte_length <= h.compressed_page_size,
      );
    case 'DICTIONARY_PAGE':
      return Boolean(dictionary && count(dictionary.num_values) && dictionary.encoding);
    case 'INDEX_PAGE':
      return true;
    default:
      return false;
  }
}

/**
 * Why a row group's decoded rows disagree with the footer's count of nulls in a top-level column, or null. Garbled
 * definition levels (stored uncompressed in version 2 pages) decode as nulls, or shift the values along the rows.
 */
export function nullsFault(group: RowGroup, rows: Record<string, unknown>[]): string | null {
  for (const { meta_data: meta } of group.columns) {
    const expected = meta?.statistics?.null_count;
    if (!meta || expected === undefined || meta.path_in_schema.length !== 1) continue;
    const column = meta.path_in_schema[0];
    let nulls = 0;
    for (const row of rows) if (row[column] === null || row[column] === undefined) nulls++;
    if (nulls !== Number(expected)) return `column ${column} holds ${nulls} nulls, its footer says ${expected}`;
  }
  return null;
}
