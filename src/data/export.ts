import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { parquetWriteFile } from 'hyparquet-writer';
import { AlightError, ExitCode } from '../errors.js';
import { permutation } from '../train/schedule.js';
import { toSweBenchRow, type DataTask, type ExportFormat } from './task.js';


/** `train=0.95,val=0.05` → named shares summing to 1. */
export function parseSplit(spec: string): { name: string; share: number }[] {
  const parts = spec.split(',').map((p) => {
    const [name, value] = p.split('=');
    const share = Number(value);
    if (!name || !Number.isFinite(share) || share < 0) throw new AlightError(`bad --split part "${p}": expected name=fraction`, ExitCode.usage);
    return { name, share };
  });
  const total = parts.reduce((a, p) => a + p.share, 0);
  if (Math.abs(total - 1) > 1e-9) throw new AlightError(`--split shares add up to ${total}, not 1`, ExitCode.usage);
  return parts;
}

/** The kept tasks in SWE-bench's columns, one file, or one per split (`out` with `.<name>` before the extension). */
export async function exportTasks(tasks: DataTask[], o: { out: string; format: ExportFormat; split?: string; seed: number }): Promise<{ file: string; tasks: number }[]> {
  if (!o.split) return [{ file: o.out, tasks: await write(o.out, tasks, o.format) }];
  const order = permutation(tasks.length, o.seed);
  const parts = parseSplit(o.split);
  const written: { file: string; tasks: number }[] = [];
  let start = 0;
  for (const [k, p] of parts.entries()) {
    const end = k === parts.length - 1 ? tasks.length : start + Math.round(p.share * tasks.length);
    const file = o.out.replace(/(\.[^./]+)?$/, (ext) => `.${p.name}${ext}`);
    written.push({ file, tasks: await write(file, order.slice(start, end).map((i) => tasks[i]), o.format) });
    start = end;
  }
  return written;
}

const columns = ['instance_id', 'repo', 'base_commit', 'patch', 'test_patch', 'problem_statement', 'hints_text', 'created_at', 'version',
  'environment_setup_commit', 'FAIL_TO_PASS', 'PASS_TO_PASS', 'patch_kind', 'image_name', 'eval_script', 'install_config', 'difficulty'];

async function write(file: string, tasks: DataTask[], format: ExportFormat): Promise<number> {
  const rows = tasks.map(toSweBenchRow);
  if (format === 'parquet') {
    parquetWriteFile({
      filename: file,
      columnData: columns.map((name) => ({
        name, type: 'STRING' as const, nullable: true,
        data: rows.map((r) => (r[name] === undefined || r[name] === null ? null : typeof r[name] === 'string' ? r[name] : JSON.stringify(r[name]))),
      })),
    });
    return rows.length;
  }
  const out = createWriteStream(file);
  for (const r of rows) if (!out.write(`${JSON.stringify(r)}\n`)) await once(out, 'drain');
  out.end();
  await once(out, 'finish');
  return rows.length;
}
