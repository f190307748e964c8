import { truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parquetWriteFile } from 'hyparquet-writer';
import { beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { alight } from '../helpers/cli.js';
import { row, writeDataFixtures } from '../helpers/data-fixtures.js';
import { tempDir } from '../helpers/gateway.js';

let dir: string;
let fx: ReturnType<typeof writeDataFixtures>;
beforeAll(() => {
  dir = tempDir();
  fx = writeDataFixtures(dir);
});

const run = async (args: string[], db: string) => {
  const res = await alight(['data', ...args, '--db', db, '--json']);
  expect(res.code, res.stderr).toBe(0);
  return JSON.parse(res.stdout);
};

async function pipeline(db: string, files: string[], extra: string[] = []) {
  const imported = await run(['import', ...files], db);
  const cleaned = await run(['clean'], db);
  const deduped = await run(['dedupe'], db);
  const decont = await run(['decontaminate', '--against', fx.reference, ...extra], db);
  return { imported, cleaned, deduped, decont };
}

function outcome(db: string): { kept: string[]; dropped: Record<string, string> } {
  const store = Store.open(db);
  try {
    const kept = [...store.data.eachKeptTask()].map((t) => t.instance_id);
    const rows = store.db
      .prepare(
        `SELECT t.instance_id AS id, d.rule FROM data_drops d JOIN data_tasks t ON t.uid = d.uid ORDER BY d.stage`,
      )
      .all() as { id: string; rule: string }[];
    return { kept, dropped: Object.fromEntries(rows.filter((r) => !kept.includes(r.id)).map((r) => [r.id, r.rule])) };
  } finally {
    store.close();
  }
}

describe('alight data', () => {
  it('imports, cleans, dedupes and decontaminates to exactly the expected set, each drop with its reason', async () => {
    const db = join(dir, 'a.db');
    const { imported, cleaned, deduped, decont } = await pipeline(db, fx.files);
    expect(imported).toMatchObject({ added: 16, invalid: 3, tasks: 16 });
    expect(cleaned.byRule).toEqual({ 'empty-f2p': 1, 'short-statement': 1, 'files-changed': 2, 'too-many-tests': 1 });
    expect(deduped).toMatchObject({ groups: 3, dropped: 4, nearPairs: 1 }); // {1, its later copy, 7}, {9, 8}, {10, 12}
    expect(decont).toMatchObject({
      referenceIds: 501,
      dropped: 2,
      flagged: 1,
      byRule: { 'benchmark-id': 1, 'benchmark-repo': 1 },
    });
    const { kept, dropped } = outcome(db);
    expect(kept.sort()).toEqual([...fx.kept].sort());
    expect(dropped).toEqual(fx.dropped);

    const stats = await run(['stats'], db);
    expect(stats).toMatchObject({ tasks: 16, kept: 5, invalid: 3 });
    expect(
      stats.invalid_rows.map((r: { file: string; line: number; reason: string }) => [r.file.split('/').pop(), r.line]),
    ).toEqual(fx.invalid.map(([f, l]) => [f, l]));
    for (const [i, [, , reason]] of fx.invalid.entries()) expect(stats.invalid_rows[i].reason).toMatch(reason);
    expect(stats.sources.find((s: { source: string }) => s.source === 'swe-smith')).toMatchObject({ n: 1, kept: 1 });

    const why = await alight(['data', 'explain', 'acme__widgets-8', '--db', db]);
    expect(why.stdout).toMatch(
      /DROPPED\n {2}dedupe near-duplicate: duplicate of acme__widgets-9 \(swe-gym-style\) by near \(Jaccard 0\.\d\d\)/,
    );
    const twice = await run(['explain', 'acme__widgets-1'], db);
    expect(twice.map((r: { drops: unknown[] }) => r.drops.length)).toEqual([0, 1]); // the later copy is the duplicate
    const flagged = await run(['explain', 'acme__widgets-10'], db);
    expect(flagged[0].flags[0]).toMatchObject({ kind: 'ngram-overlap' });
    const smith = Store.open(db);
    expect([...smith.data.eachKeptTask()].find((t) => t.repo.startsWith('swesmith/'))).toMatchObject({
      patch_kind: 'bug',
      format: 'swe-smith',
      fail_to_pass: ['tests/test_core.py::test_empty_sum'],
    });
    smith.close();
  });

  it('is idempotent on re-import, and the strict preset and --require-env drop more, with reasons', async () => {
    const db = join(dir, 'b.db');
    await run(['import', ...fx.files], db);
    expect(await run(['import', ...fx.files], db)).toMatchObject({ added: 0, invalid: 3, tasks: 16 });
    const strict = await run(['clean', '--preset', 'strict', '--require-env'], db);
    // acme__widgets-11 (6 source files), and -4 (16), which files-changed drops too
    expect(strict.byRule['r2e-size']).toBe(2);
    expect(strict.byRule['missing-env']).toBe(15); // all but the SWE-smith row, which names its image
    const none = await run(['clean', '--preset', 'none'], db);
    expect(none.dropped).toBe(0);
  });

  it(
    'round-trips: the export, in JSONL or Parquet, ' + 're-imports to the same kept set; --split partitions it',
    async () => {
      const db = join(dir, 'c.db');
      await pipeline(db, fx.files);
      for (const format of ['jsonl', 'parquet']) {
        const out = join(dir, `kept.${format}`);
        await run(['export', '--format', format, '--out', out], db);
        const again = join(dir, `again-${format}.db`);
        const imported = await run(['import', out], again);
        expect(imported).toMatchObject({ added: 5, invalid: 0 });
        await run(['clean'], again);
        await run(['dedupe'], again);
        expect(outcome(again).kept.sort()).toEqual([...fx.kept].sort());
        const store = Store.open(again);
        expect([...store.data.eachKeptTask()].find((t) => t.format === 'swe-smith')?.patch_kind).toBe('bug');
        store.close();
      }
      const parts = await run(
        ['export', '--out', join(dir, 'split.jsonl'), '--split', 'train=0.6,val=0.4', '--seed', '3'],
        db,
      );
      expect(parts.map((p: { file: string; tasks: number }) => [p.file.split('/').pop(), p.tasks])).toEqual([
        ['split.train.jsonl', 3],
        ['split.val.jsonl', 2],
      ]);
    },
  );

  it('refuses bad files clearly and writes nothing for them', async () => {
    const db = join(dir, 'd.db');
    const parquet = join(dir, 'columns.parquet');
    parquetWriteFile({
      filename: parquet,
      columnData: [
        { name: 'instance_id', data: ['x'], type: 'STRING' },
        { name: 'repo', data: ['a/b'], type: 'STRING' },
      ],
    });
    const missing = await alight(['data', 'import', parquet, '--db', db]);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toMatch(/lacks the column\(s\) patch, FAIL_TO_PASS \(it has: instance_id, repo\)/);
    const huge = join(dir, 'huge.json');
    writeFileSync(huge, '');
    truncateSync(huge, Math.floor(1.1 * 2 ** 30)); // sparse: no disk used
    const big = await alight(['data', 'import', huge, '--db', db]);
    expect(big.code).toBe(3);
    expect(big.stderr).toMatch(/1126 MiB of JSON, which must be read whole \(at most 256 MiB\); convert it to JSONL/);
    // All or nothing: 1,500 good rows, then a second file that is not JSON — the first file's rows are not kept
    // either.
    const good = join(dir, 'good.jsonl');
    writeFileSync(good, Array.from({ length: 1500 }, (_, i) => JSON.stringify(row(`acme__bulk-${i}`))).join('\n'));
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '[{"instance_id": ');
    const partial = await alight(['data', 'import', good, broken, '--db', db]);
    expect(partial.code).toBe(3);
    expect(partial.stderr).toMatch(/broken\.json is not valid JSON/);
    const absent = await alight(['data', 'import', good, join(dir, 'nope.jsonl'), '--db', db]);
    expect(absent.stderr).toMatch(/no such file: .*nope\.jsonl/);
    expect(await run(['stats'], db)).toMatchObject({ tasks: 0, invalid: 0 });
  });

  it(
    'reads a byte-order mark, a missing PASS_TO_PASS and ' +
      'epoch-second dates; a stage run again clears the later ones',
    async () => {
      const db = join(dir, 'e.db');
      const file = join(dir, 'odd.jsonl');
      const { PASS_TO_PASS: _, ...noP2p } = row('acme__odd-1');
      writeFileSync(
        file,
        `\uFEFF${JSON.stringify(noP2p)}\n${JSON.stringify(row('acme__odd-2', { created_at: 1_700_000_000 }))}\n`,
      );
      expect(await run(['import', file], db)).toMatchObject({ added: 2, invalid: 0 });
      const store = Store.open(db);
      const [a, b] = [...store.data.eachKeptTask()];
      store.close();
      expect(a.pass_to_pass).toEqual([]);
      expect(b.created_at).toBe('2023-11-14T22:13:20.000Z');
      const full = join(dir, 'full.db');
      await pipeline(full, fx.files);
      await run(['clean'], full); // dedupe and decontaminate judged what the old clean kept: their verdicts go
      expect((await run(['stats'], full)).drops.map((d: { stage: string }) => d.stage)).toEqual([
        'clean',
        'clean',
        'clean',
        'clean',
      ]);
      const again = await alight(['data', 'import', join(dir, 'odd.jsonl'), '--db', full]);
      expect(again.stdout).toMatch(/verdicts were cleared; run them again/);
    },
  );
});
