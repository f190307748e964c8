import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { parquetMetadata } from 'hyparquet';
import { parquetHeader } from 'hyparquet/src/column.js';
import { parquetWriteFile } from 'hyparquet-writer';
import { beforeAll, describe, expect, it } from 'vitest';
import { alight } from '../helpers/cli.js';
import { row } from '../helpers/data-fixtures.js';
import { tempDir } from '../helpers/gateway.js';

// Damaged files, each made from a valid one by a change a disk, a download or a broken writer could make. Each was
// imported as garbage rows or refused with a decoder's internal message before its fix.
let dir: string;
beforeAll(() => {
  dir = tempDir();
});

const rows = Array.from({ length: 50 }, (_, i) => row(`acme__pq-${i}`, i === 3 ? { hints_text: 'café au lait' } : {}));
const columns = Object.keys(rows[0]);

const gzipPage = (b: Uint8Array): Uint8Array => new Uint8Array(gzipSync(b));

type Codec = 'SNAPPY' | 'GZIP' | 'UNCOMPRESSED';
/** A valid Parquet file of the 50 rows, its pages compressed with `codec`, as bytes. */
function parquetBytes(codec: Codec, data = rows): Buffer {
  const file = join(dir, `valid-${codec}.parquet`);
  parquetWriteFile({
    filename: file,
    codec,
    compressors: { GZIP: gzipPage },
    columnData: columns.map((name) => ({ name, type: 'STRING' as const, data: data.map((r) => r[name] as string) })),
  });
  return readFileSync(file);
}

/** Where the first page of a column starts (its page header), or its first data page (after its dictionary). */
function pageOffset(bytes: Buffer, column: string, data = false): number {
  const chunk = parquetMetadata(new Uint8Array(bytes).buffer).row_groups[0].columns.find(
    (c) => c.meta_data?.path_in_schema[0] === column,
  );
  return Number((!data && chunk?.meta_data?.dictionary_page_offset) || chunk?.meta_data?.data_page_offset);
}

/** `bytes` with `put` written over them at `at`. */
function overwrite(bytes: Buffer, at: number, put: number[] | Buffer): Buffer {
  const out = Buffer.from(bytes);
  out.set(put, at);
  return out;
}

const write = (name: string, bytes: Buffer | string): string => {
  const file = join(dir, name);
  writeFileSync(file, bytes);
  return file;
};

/** Imports a valid JSONL file and then `file` in one command, which must fail as a user error, storing nothing. */
async function refused(file: string, db: string): Promise<string> {
  const good = write('good.jsonl', `${JSON.stringify(row('acme__good-1'))}\n`);
  const res = await alight(['data', 'import', good, file, '--db', db]);
  expect([res.code, res.stderr], file).toEqual([3, expect.stringContaining(file)]);
  expect(res.stderr).not.toMatch(/unexpected error| {4}at /);
  expect(res.stderr).toMatch(/nothing was imported/);
  const stats = await alight(['data', 'stats', '--db', db, '--json']);
  expect(JSON.parse(stats.stdout), file).toMatchObject({ tasks: 0, invalid: 0 });
  return res.stderr;
}

describe('alight data import of damaged files', () => {
  it('refuses a cut, a bad footer length, bad page headers, a bad compressed payload and a bad length, ' +
    'naming the file and the column', async () => {
    const snappy = parquetBytes('SNAPPY');
    const plain = parquetBytes('UNCOMPRESSED');
    const gzip = parquetBytes('GZIP');
    const footerLength = snappy.length - 8;
    const firstPatch = plain.indexOf('diff --git a/src/acme__pq-0.py');
    const repoHeader = pageOffset(snappy, 'repo', true) + 10;
    // The instance ids' definition levels, stored before the compressed values: every one made 0 (null), the run's
    // header kept.
    const ids = { view: new DataView(new Uint8Array(snappy).buffer), offset: pageOffset(snappy, 'instance_id') };
    const levels = parquetHeader(ids).data_page_header_v2?.definition_levels_byte_length ?? 0;
    const cases: [string, Buffer, RegExp][] = [
      ['cut.parquet', snappy.subarray(0, snappy.length - 100), /cut short or not a Parquet file/],
      ['footer-length.parquet', overwrite(snappy, footerLength, [16, 0, 0, 0]), /its footer .* cannot be read/],
      [
        'footer-length-big.parquet',
        overwrite(snappy, footerLength, [0xff, 0xff, 0, 0]),
        /its footer .* cannot be read/,
      ],
      ['page-header.parquet', overwrite(snappy, pageOffset(snappy, 'patch') + 1, [0xff, 0xee]), /column patch/],
      // a field header of the repo column's data page: the header then lacks its levels' lengths, which hung hyparquet
      ['page-fields.parquet', overwrite(snappy, repoHeader, [snappy[repoHeader] ^ 0xff]), /column repo.*is damaged/],
      // the deflate stream of the patch column's page, 20 bytes past the gzip magic
      [
        'gzip-payload.parquet',
        overwrite(gzip, gzip.indexOf('\x1f\x8b\x08', pageOffset(gzip, 'patch'), 'latin1') + 20, [0x5a]),
        /column patch/,
      ],
      [
        'levels.parquet',
        overwrite(snappy, ids.offset + 1, Array(levels - 1).fill(0)),
        /column instance_id holds 50 nulls, its footer says 0/,
      ],
      // the length before the first patch, made 2 GiB
      ['length.parquet', overwrite(plain, firstPatch - 4, [0xff, 0xff, 0xff, 0x7f]), /column patch/],
    ];
    for (const [name, bytes, message] of cases) {
      const stderr = await refused(write(name, bytes), join(dir, `${name}.db`));
      expect(stderr, name).toMatch(message);
      expect(stderr, name).toMatch(/damaged|cut short/);
      if (/column/.test(message.source)) expect(stderr, name).toMatch(/rows 1\.\.50/);
    }
  }, 180_000);

  it('refuses a Parquet string that is not UTF-8, from a writer or from garbled compressed data, ' +
    'and a JSON document with such bytes: the same rule as JSONL, never replaced', async () => {
    const plain = parquetBytes('UNCOMPRESSED');
    // é (C3 A9) as Latin-1 (E9) and a space: a writer that did not encode its strings
    const latin1 = overwrite(plain, plain.indexOf('café'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20]));
    expect(await refused(write('latin1.parquet', latin1), join(dir, 'latin1.db'))).toMatch(
      /row 4, column hints_text is not UTF-8/,
    );
    // Snappy copies earlier output: a literal garbled inside the statements' page spreads to the rows that copy it.
    const snappy = parquetBytes('SNAPPY');
    const statements = pageOffset(snappy, 'problem_statement');
    const garbled = overwrite(snappy, snappy.indexOf('request', statements) + 2, [0xff, 0x00, 0xff]);
    expect(await refused(write('garbled.parquet', garbled), join(dir, 'garbled.db'))).toMatch(
      /row \d+, column problem_statement is not UTF-8/,
    );
    const [before, after] = JSON.stringify([row('acme__json-1', { hints_text: 'caf§' })]).split('§');
    const json = write('latin1.json', Buffer.concat([Buffer.from(before), Buffer.from([0xe9]), Buffer.from(after)]));
    expect(await refused(json, join(dir, 'latin1-json.db'))).toMatch(/latin1\.json is not UTF-8 text/);
  }, 120_000);

  it('keeps aside a row whose text holds a NUL character, from JSONL and Parquet alike', async () => {
    const withNul = (id: string, field: string) => row(id, { [field]: `${row(id)[field]}\0\0` });
    const jsonlFile = write(
      'nul.jsonl',
      [row('acme__nul-ok-1'), withNul('acme__nul-1', 'patch'), withNul('acme__nul-2', 'problem_statement')]
        .map((r) => JSON.stringify(r))
        .join('\n'),
    );
    const parquetFile = write(
      'nul.parquet',
      parquetBytes('SNAPPY', [row('acme__nul-ok-2'), withNul('acme__nul-3', 'test_patch')]),
    );
    const db = join(dir, 'nul.db');
    const res = await alight(['data', 'import', jsonlFile, parquetFile, '--db', db, '--json']);
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ added: 2, invalid: 3 });
    const stats = JSON.parse((await alight(['data', 'stats', '--db', db, '--json'])).stdout);
    const reasons = stats.invalid_rows.map((r: { reason: string }) => r.reason).join('\n');
    for (const field of ['patch', 'problem_statement', 'test_patch'])
      expect(reasons).toMatch(new RegExp(`(^|\\n)${field}: holds a NUL character`));
  }, 120_000);

  it('refuses a folder named like a data file', async () => {
    for (const name of ['x.jsonl', 'x.json', 'x.parquet']) {
      const folder = join(dir, name);
      mkdirSync(folder);
      const res = await alight(['data', 'import', folder, '--db', join(dir, 'folder.db')]);
      expect([res.code, res.stderr], name).toEqual([3, expect.stringMatching(/x\.\w+ is a folder, not a file/)]);
      expect(res.stderr).not.toMatch(/unexpected error| {4}at /);
    }
  }, 60_000);
});
