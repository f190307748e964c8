import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { fileWriter, ParquetWriter, schemaFromColumnData } from 'hyparquet-writer';
import { permutation } from '../algo/schedule.js';
import { AlightError, ExitCode } from '../errors.js';
import { type DataTask, type ExportFormat, toSweBenchRow } from './task.js';

/** `train=0.95,val=0.05` → named shares summing to 1. */
export function parseSplit(spec: string): { name: string; share: number }[] {
  const parts = spec.split(',').map((p) => {
    const [name, value] = p.split('=');
    const share = Number(value);
    if (!name || !Number.isFinite(share) || share < 0)
      throw new AlightError(`bad --split part "${p}": expected name=fraction`, ExitCode.usage);
    return { name, share };
  });
  const repeated = parts.find((p, i) => parts.findIndex((q) => q.name === p.name) !== i);
  if (repeated)
    throw new AlightError(`--split names ${repeated.name} twice: each part is a file of its own`, ExitCode.usage);
  const total = parts.reduce((a, p) => a + p.share, 0);
  if (Math.abs(total - 1) > 1e-9) throw new AlightError(`--split shares add up to ${total}, not 1`, ExitCode.usage);
  return parts;
}

/** The tasks to export, read twice at most (Parquet needs its columns before its first row). */
export interface ExportSource {
  count: number;
  each(): Iterable<DataTask>;
}

/**
 * The kept tasks in SWE-bench's columns, one file, or one per split (`out` with `.<name>` before the extension; each
 * task's part by its place in a seeded permutation, each file in import order). Streamed: a task at a time.
 */
export async function exportTasks(
  source: ExportSource,
  o: { out: string; format: ExportFormat; split?: string; seed: number },
): Promise<{ file: string; tasks: number }[]> {
  const parts = o.split ? parseSplit(o.split) : [{ name: null, share: 1 }];
  const partOf = new Uint16Array(source.count);
  const order = permutation(source.count, o.seed);
  let start = 0;
  parts.forEach((p, k) => {
    const end = k === parts.length - 1 ? source.count : start + Math.round(p.share * source.count);
    for (let pos = start; pos < end; pos++) partOf[order[pos]] = k;
    start = end;
  });
  const columns = o.format === 'parquet' ? columnsOf(source.each()) : [];
  const writers = parts.map((p) => {
    const file = p.name === null ? o.out : o.out.replace(/(\.[^./]+)?$/, (ext) => `.${p.name}${ext}`);
    return { file, rows: o.format === 'parquet' ? parquetRows(file, columns) : jsonlRows(file), tasks: 0 };
  });
  let i = 0;
  for (const t of source.each()) {
    const w = writers[partOf[i++]];
    await w.rows.add(toSweBenchRow(t));
    w.tasks++;
  }
  for (const w of writers) await w.rows.end();
  return writers.map((w) => ({ file: w.file, tasks: w.tasks }));
}

interface RowWriter {
  add(row: Record<string, unknown>): Promise<void> | void;
  end(): Promise<void> | void;
}

function jsonlRows(file: string): RowWriter {
  const out = createWriteStream(file);
  return {
    add: async (r) => {
      if (!out.write(`${JSON.stringify(r)}\n`)) await once(out, 'drain');
    },
    end: async () => {
      out.end();
      await once(out, 'finish');
    },
  };
}

/**
 * SWE-bench's columns first, in its order, then every other column any row has (SWE-bench v5's image, SWE-rebench's
 * meta, …).
 */
const known = [
  'instance_id',
  'repo',
  'base_commit',
  'patch',
  'test_patch',
  'problem_statement',
  'hints_text',
  'created_at',
  'version',
  'environment_setup_commit',
  'FAIL_TO_PASS',
  'PASS_TO_PASS',
  'patch_kind',
  'image_name',
  'eval_script',
  'install_config',
  'difficulty',
];

type Column = { name: string; type: 'STRING' | 'JSON' };

/**
 * Parquet columns: text where every value is text, else JSON (Parquet's JSON type, which readers give back as the
 * value: an `install_config` object comes back an object, not a string holding one). Absent values are nulls.
 */
function columnsOf(tasks: Iterable<DataTask>): Column[] {
  const json = new Set<string>();
  const extra = new Set<string>();
  for (const t of tasks) {
    for (const [k, v] of Object.entries(toSweBenchRow(t))) {
      if (!known.includes(k)) extra.add(k);
      if (v !== null && typeof v !== 'string') json.add(k);
    }
  }
  return [...known, ...[...extra].sort()].map((name) => ({ name, type: json.has(name) ? 'JSON' : 'STRING' }));
}

/** A row group every 10,000 rows: memory holds one group, not the file. */
function parquetRows(file: string, columns: Column[]): RowWriter {
  const columnData = (rows: Record<string, unknown>[]) =>
    columns.map((c) => ({ ...c, nullable: true, data: rows.map((r) => r[c.name] ?? null) }));
  const writer = new ParquetWriter({
    writer: fileWriter(file),
    schema: schemaFromColumnData({ columnData: columnData([]) }),
  });
  let batch: Record<string, unknown>[] = [];
  const flush = (): void => {
    if (batch.length)
      writer.write({
        columnData: columnData(batch).map(({ name, data }) => ({ name, data })),
        rowGroupSize: batch.length,
      });
    batch = [];
  };
  return {
    add: (r) => {
      batch.push(r);
      if (batch.length === 10_000) flush();
    },
    end: () => {
      flush();
      writer.finish();
    },
  };
}
