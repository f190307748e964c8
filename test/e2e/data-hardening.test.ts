import { closeSync, mkdirSync, openSync, statSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { parquetWriteFile } from 'hyparquet-writer';
import { beforeAll, describe, expect, it } from 'vitest';
import { toSweBenchRow } from '../../src/data/task.js';
import { Store } from '../../src/store/store.js';
import { alight } from '../helpers/cli.js';
import { row } from '../helpers/data-fixtures.js';
import { tempDir } from '../helpers/gateway.js';

// The adversarial run's findings against `alight data`, one test each: every one failed before its fix.
let dir: string;
beforeAll(() => {
  dir = tempDir();
});

const run = async (args: string[], db: string) => {
  const res = await alight(['data', ...args, '--db', db, '--json'], { timeoutMs: 300_000 });
  expect(res.code, res.stderr).toBe(0);
  return JSON.parse(res.stdout);
};
const jsonl = (name: string, rows: unknown[]): string => {
  const file = join(dir, name);
  writeFileSync(file, `${rows.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n')}\n`);
  return file;
};
const invalidReasons = async (db: string): Promise<string[]> =>
  (await run(['stats'], db)).invalid_rows.map((r: { reason: string }) => r.reason);

describe('alight data under adversarial input', () => {
  it('near-dedupes 6,000 templated statements (one bucket) in linear time: one group', async () => {
    const words = Array.from({ length: 60 }, (_, i) => `w${i}`);
    const rows = Array.from({ length: 6000 }, (_, i) =>
      row(`tmpl__t-${i}`, {
        problem_statement: [...words.slice(0, 30), `v${i}`, ...words.slice(31)].join(' '),
        patch: `diff --git a/s${i}.py b/s${i}.py\n`,
      }),
    );
    const db = join(dir, 'near.db');
    await run(['import', jsonl('templated.jsonl', rows)], db);
    const deduped = await run(['dedupe'], db);
    // Pairs share 51 of 61 shingles (Jaccard 0.84): LSH brings ~96% of them into a shared bucket (a statement whose
    // 9 bands all hold one of its own 5 shingles' minima shares none), and every one it does is linked.
    expect(deduped).toMatchObject({ checked: 6000, groups: 1 });
    expect(deduped.dropped).toBeGreaterThan(5700);
    expect(deduped.candidates).toBeLessThan(6000 * 16);
  }, 300_000);

  it('keeps aside, with the reason, rows nested 100,000 deep, not UTF-8, ' +
    'with a lone-surrogate id or a year-275760 date; the others import', async () => {
    const deep =
      `${JSON.stringify(row('acme__deep-1')).slice(0, -1)}, ` + `"meta": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    const file = join(dir, 'odd.jsonl');
    // é in Latin-1 below
    const [before, after] = JSON.stringify(row('acme__latin1-1', { hints_text: 'caf§' })).split('§');
    const lines = [
      Buffer.from(`${JSON.stringify(row('acme__ok-1'))}\n${deep}\n`),
      Buffer.from(before),
      Buffer.from([0xe9]),
      Buffer.from(`${after}\n`),
      Buffer.from(`${JSON.stringify(row('acme__ok-2')).replace('"acme__ok-2"', '"acme__\\ud800"')}\n`),
      Buffer.from(`${JSON.stringify(row('acme__future-1', { created_at: '+275760-09-13T00:00:00.000Z' }))}\n`),
    ];
    writeFileSync(file, Buffer.concat(lines));
    // The same deep value in a JSON document's row (parsed whole, so checked after parsing).
    const doc = join(dir, 'deep.json');
    writeFileSync(doc, `[${JSON.stringify(row('acme__ok-3'))}, ${deep}]`);
    const db = join(dir, 'odd.db');
    const imported = await run(['import', file, doc], db);
    expect(imported).toMatchObject({ added: 2, invalid: 5 });
    const reasons = (await invalidReasons(db)).join('\n');
    expect(reasons).toMatch(/nests arrays and objects deeper than 512 levels/);
    expect(reasons).toMatch(/nests too deep/);
    expect(reasons).toMatch(/not valid UTF-8/);
    expect(reasons).toMatch(/instance_id: not valid Unicode \(a lone surrogate\)/);
    expect(reasons).toMatch(/a date in the year 275760/);
  }, 120_000);

  it('refuses, without dying, a 600 MB line and a 100 MB ' +
    'statement; decontaminate --against such a file still runs', async () => {
    const file = join(dir, 'huge-lines.jsonl');
    const fd = openSync(file, 'w');
    writeSync(fd, `${JSON.stringify(row('acme__small-1'))}\n`);
    writeSync(fd, `${JSON.stringify(row('acme__big-1', { problem_statement: 'word '.repeat(20 * 2 ** 20) }))}\n`);
    closeSync(fd);
    truncateSync(file, statSync(file).size + 600 * 2 ** 20); // a sparse run of NULs past V8's string limit, no newline
    const db = join(dir, 'huge.db');
    const imported = await run(['import', file], db);
    expect(imported).toMatchObject({ added: 1, invalid: 2 });
    const reasons = (await invalidReasons(db)).join('\n');
    expect(reasons).toMatch(/longer than 32 MiB: not read/);
    const against = jsonl('reference-big.jsonl', [
      row('other__ref-1', { problem_statement: 'word '.repeat(20 * 2 ** 20) }),
    ]);
    const decont = await run(['decontaminate', '--against', against, '--no-builtin'], db);
    expect(decont).toMatchObject({ checked: 1, referenceRows: 0, referenceUnreadable: 1 });
    expect(decont.firstUnreadable).toMatch(/reference-big\.jsonl:1: longer than 32 MiB/);
  }, 300_000);

  it('refuses a repeated split name, a missing or folder --out, a missing ' +
    '--against, bad --perms and --ngram, a Parquet file named .jsonl', async () => {
    const db = join(dir, 'errors.db');
    await run(['import', jsonl('two.jsonl', [row('acme__a-1'), row('acme__a-2')])], db);
    mkdirSync(join(dir, 'a-folder'));
    const parquet = join(dir, 'really-parquet.jsonl');
    parquetWriteFile({ filename: parquet, columnData: [{ name: 'instance_id', data: ['x'], type: 'STRING' }] });
    const cases: [string[], number, RegExp][] = [
      [['export', '--out', join(dir, 'split.jsonl'), '--split', 'train=0.5,train=0.5'], 2, /--split names train twice/],
      [['export', '--out', join(dir, 'no-such-folder', 'out.jsonl')], 3, /the folder .*no-such-folder does not exist/],
      [['export', '--out', join(dir, 'a-folder')], 3, /is a folder, not a file/],
      [['decontaminate', '--against', join(dir, 'nope.jsonl')], 3, /--against .*nope\.jsonl: no such file/],
      [['decontaminate', '--against', join(dir, 'a-folder')], 3, /is a folder, not a file/],
      [['decontaminate', '--ngram', '0'], 2, /--ngram must be at least 1/],
      [['dedupe', '--perms', '100000'], 2, /--perms must be at most 2048/],
      [['import', parquet], 3, /is a Parquet file: name it \.parquet/],
    ];
    for (const [args, code, message] of cases) {
      const res = await alight(['data', ...args, '--db', db]);
      expect([res.code, res.stderr], args.join(' ')).toEqual([code, expect.stringMatching(message)]);
      expect(res.stderr).not.toMatch(/unexpected error| {4}at /);
    }
  }, 120_000);

  it('says clearly that another import holds the store, and how many invalid rows the stats list', async () => {
    const db = join(dir, 'locked.db');
    await run(
      [
        'import',
        jsonl(
          'bad-rows.jsonl',
          Array.from({ length: 30 }, (_, i) => `{"bad": ${i}`),
        ),
      ],
      db,
    );
    const stats = await run(['stats'], db);
    expect(stats).toMatchObject({ invalid: 30, invalid_rows_listed: 20 });
    const text = await alight(['data', 'stats', '--db', db]);
    expect(text.stdout).toMatch(/invalid rows \(the first 20 of 30/);
    const holder = new Database(db);
    holder.exec('BEGIN IMMEDIATE'); // a writer, as an import in progress is
    try {
      const res = await alight(['data', 'import', jsonl('one.jsonl', [row('acme__x-1')]), '--db', db]);
      expect(res.code).toBe(3);
      expect(res.stderr).toMatch(/being written by another process .*holds the store's write lock for its whole run/);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
  }, 120_000);
});

describe('memory', () => {
  it('cleans, dedupes, describes and exports 100,000 ' +
    'tasks in a 128 MB heap: every stage streams the store', async () => {
    const file = join(dir, 'many.jsonl');
    const fd = openSync(file, 'w');
    for (let i = 0; i < 100_000; i += 1000) {
      writeSync(
        fd,
        `${Array.from({ length: 1000 }, (_, k) =>
          JSON.stringify(row(`acme__many-${i + k}`, { hints_text: 'h'.repeat(1000) })),
        ).join('\n')}\n`,
      );
    }
    closeSync(fd);
    const db = join(dir, 'many.db');
    const small = { NODE_OPTIONS: '--max-old-space-size=128' };
    const step = async (args: string[]) => {
      const res = await alight(['data', ...args, '--db', db, '--json'], { env: small, timeoutMs: 600_000 });
      expect(res.code, res.stderr.slice(-2000)).toBe(0);
      return JSON.parse(res.stdout);
    };
    expect(await step(['import', file])).toMatchObject({ added: 100_000 });
    expect(await step(['clean'])).toMatchObject({ checked: 100_000 });
    expect((await step(['dedupe'])).checked).toBeGreaterThan(90_000);
    expect((await step(['stats'])).distributions.statement_words).not.toBeNull();
    const written = await step(['export', '--format', 'parquet', '--out', join(dir, 'many.parquet')]);
    expect(written[0].tasks).toBeGreaterThan(90_000);
  }, 600_000);
});

describe('export round trip', () => {
  it('re-imports JSONL and Parquet exports of six input shapes to the same tasks, every column equal', async () => {
    const listed = (r: Record<string, unknown>) => ({
      ...r,
      FAIL_TO_PASS: JSON.parse(r.FAIL_TO_PASS as string),
      PASS_TO_PASS: JSON.parse(r.PASS_TO_PASS as string),
    });
    const files = [
      jsonl('rt-swe-bench.jsonl', [row('acme__rt-1'), row('acme__rt-2', { hints_text: 'see #12' })]),
      jsonl('rt-swe-smith.jsonl', [
        listed(
          row('acme__rt-3', {
            repo: 'swesmith/acme__rt.1234abcd',
            image_name: 'swesmith.x86_64.acme',
            patch_kind: 'bug',
          }),
        ),
      ]),
      join(dir, 'rt-swe-gym.json'),
      join(dir, 'rt-rebench.json'),
      join(dir, 'rt-pandas.json'),
      join(dir, 'rt-v5.parquet'),
    ];
    writeFileSync(files[2], JSON.stringify([listed(row('acme__rt-4'))]));
    writeFileSync(
      files[3],
      JSON.stringify({
        a: row('acme__rt-5', {
          install_config: { python: '3.11', install: 'pip install -e .', pre_install: ['apt-get update'] },
          meta: { commit_count: 3, has_tests: true },
          license: 'MIT',
        }),
      }),
    );
    const pandas = row('acme__rt-6', { difficulty: '15 min - 1 hour' });
    writeFileSync(files[4], JSON.stringify(Object.fromEntries(Object.entries(pandas).map(([k, v]) => [k, { 0: v }]))));
    const v5 = row('acme__rt-7', {
      image: 'docker.io/swebench/sweb.eval.x86_64.acme_1776_rt-7',
      log_parser: 'parse_log_pytest',
      eval_script: 'pytest -rA',
    });
    parquetWriteFile({
      filename: files[5],
      columnData: [...Object.keys(v5), 'install_config'].map((name) => ({
        name,
        type: 'STRING' as const,
        nullable: true,
        data: [(v5[name] ?? null) as string | null],
      })),
    });

    const db = join(dir, 'rt.db');
    expect(await run(['import', ...files], db)).toMatchObject({ added: 7, invalid: 0 });
    const shape = (path: string) => {
      const store = Store.open(path);
      try {
        return Object.fromEntries(
          [...store.data.eachKeptTask()].map((t) => [t.instance_id, { format: t.format, row: toSweBenchRow(t) }]),
        );
      } finally {
        store.close();
      }
    };
    const original = shape(db);
    expect(original['acme__rt-5'].format).toBe('swe-rebench');
    expect(original['acme__rt-7'].row).toMatchObject({ image: v5.image, log_parser: 'parse_log_pytest' });
    for (const format of ['jsonl', 'parquet']) {
      const out = join(dir, `rt-out.${format}`);
      await run(['export', '--format', format, '--out', out], db);
      const again = join(dir, `rt-again-${format}.db`);
      expect(await run(['import', out], again)).toMatchObject({ added: 7, invalid: 0 });
      expect(shape(again), format).toEqual(original);
    }
  }, 120_000);
});
