/**
 * `alight data` at scale: 100,000 synthetic SWE-smith-like tasks (generated here: 2% exact copies, 5% near copies
 * with a few words changed, the rest distinct) through import + clean + dedupe, timed in a process of its own (tasks/s,
 * peak RSS); then near-dedupe alone against Python's datasketch MinHashLSH on the same statements and parameters
 * (128 permutations, word 5-grams, threshold 0.8), and both against exact Jaccard on a 5,000-task sample (recall).
 *
 * Then a ~2 GB JSONL file is imported to show the import's memory does not grow with the file; 6k and 50k templated
 * statements (one LSH bucket) are deduped; and a million small tasks go through every stage and an export.
 *
 *   npm run bench:data          # ~15 min on 2 cores, ~7 GB of temporary disk; DATA_BENCH_TASKS / _BIG_TASKS /
 *                               # _MILLION change the sizes
 */
import { execFileSync, fork, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, createWriteStream, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { nearDuplicatePairs } from '../src/data/dedupe.js';
import { exportTasks } from '../src/data/export.js';
import { defaultMinHash, jaccard, shingles } from '../src/data/minhash.js';
import { cleanTasks, dedupeTasks, importFiles } from '../src/data/pipeline.js';
import { readRows } from '../src/data/read.js';
import { ensurePythonEnv } from '../src/setup/python-env.js';
import { Store } from '../src/store/store.js';
import { setupProgress } from '../src/ui/setup-progress.js';
import { tempDir } from '../test/helpers/gateway.js';

const TASKS = Number(process.env.DATA_BENCH_TASKS ?? 100_000);
const SAMPLE = 5000;
const BIG_TASKS = Number(process.env.DATA_BENCH_BIG_TASKS ?? 105_000);
const MILLION = Number(process.env.DATA_BENCH_MILLION ?? 1_000_000);

if (process.argv[2] === 'import-only') {
  const started = performance.now();
  const store = Store.open(process.argv[3]);
  const imported = await importFiles(store, [process.argv[4]], { format: 'auto' });
  store.close();
  process.send!({
    seconds: (performance.now() - started) / 1000,
    rssMb: process.resourceUsage().maxRSS / 1024,
    imported: imported.added,
  });
} else if (process.argv[2] === 'pipeline') {
  // import → clean → dedupe (→ export, when a file is named), each phase timed; peak RSS of the whole.
  const started = performance.now();
  const store = Store.open(process.argv[3]);
  const imported = await importFiles(store, [process.argv[4]], { format: 'auto' });
  const t1 = performance.now();
  const cleaned = cleanTasks(store, 'default', {});
  const t2 = performance.now();
  const deduped = dedupeTasks(store, { near: true });
  const t3 = performance.now();
  if (process.argv[5])
    await exportTasks(
      { count: store.data.keptCount(), each: () => store.data.eachKeptTask() },
      { out: process.argv[5], format: 'jsonl', seed: 1 },
    );
  const t4 = performance.now();
  store.close();
  process.send!({
    seconds: (t4 - started) / 1000,
    phases: {
      import: (t1 - started) / 1000,
      clean: (t2 - t1) / 1000,
      dedupe: (t3 - t2) / 1000,
      export: (t4 - t3) / 1000,
    },
    rssMb: process.resourceUsage().maxRSS / 1024,
    imported: imported.added,
    dropped: cleaned.dropped,
    duplicates: deduped.dropped,
  });
} else {
  const dir = tempDir('alight-bench-data-');
  const file = join(dir, 'tasks.jsonl');
  const statements = generate(TASKS);
  const out = createWriteStream(file);
  for (let i = 0; i < TASKS; i++)
    if (!out.write(`${JSON.stringify(task(i, statements[i]))}\n`)) await once(out, 'drain');
  out.end();
  await once(out, 'finish');

  const child = fork(import.meta.filename, ['pipeline', join(dir, 'bench.db'), file], {
    execArgv: ['--import', 'tsx'],
  });
  const pipe = await new Promise<PipelineRun>((resolve) => child.once('message', resolve as never));

  // The JSONL reader (bytes split by hand, strict UTF-8, nesting checked) against readline + JSON.parse, same file.
  const readStarted = performance.now();
  for await (const line of createInterface({
    input: createReadStream(file, { encoding: 'utf8' }),
    crlfDelay: Infinity,
  }))
    JSON.parse(line);
  const readlineSeconds = (performance.now() - readStarted) / 1000;
  const oursStarted = performance.now();
  for await (const item of readRows(file)) if ('error' in item) throw new Error(item.error);
  const readerSeconds = (performance.now() - oursStarted) / 1000;

  // Near-dedupe alone, on the same statements, against datasketch.
  const started = performance.now();
  const ours = nearDuplicatePairs(statements, defaultMinHash);
  const oursSeconds = (performance.now() - started) / 1000;
  const python = await ensurePythonEnv(setupProgress());
  if (spawnSync(python, ['-c', 'import datasketch'], { stdio: 'ignore' }).status !== 0) {
    // Only datasketch: the environment's numpy (2.x, which its torch and verl need) satisfies it and must stay.
    execFileSync(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', 'datasketch==2.0.0'], {
      stdio: 'inherit',
    });
  }
  writeFileSync(join(dir, 'statements.jsonl'), statements.map((s) => JSON.stringify(s)).join('\n'));
  execFileSync(
    python,
    [join(import.meta.dirname, 'near-dedupe.py'), join(dir, 'statements.jsonl'), '--out', join(dir, 'pairs.json')],
    { stdio: 'inherit' },
  );
  const theirs = JSON.parse(readFileSync(join(dir, 'pairs.json'), 'utf8')) as {
    seconds: number;
    pairs: [number, number, number][];
    bands: number;
    rows: number;
    version: string;
  };
  const key = (p: [number, number, number]): string => `${Math.min(p[0], p[1])},${Math.max(p[0], p[1])}`;
  const ourSet = new Set(ours.pairs.map(key));
  const theirSet = new Set(theirs.pairs.map(key));
  const common = [...ourSet].filter((k) => theirSet.has(k)).length;

  // Recall against exact Jaccard over every pair of a sample.
  const sets = statements.slice(0, SAMPLE).map((s) => shingles(s, defaultMinHash.shingle));
  const truth = new Set<string>();
  for (let i = 0; i < SAMPLE; i++)
    for (let j = i + 1; j < SAMPLE; j++)
      if (jaccard(sets[i], sets[j]) >= defaultMinHash.threshold) truth.add(`${i},${j}`);
  // alight links each near duplicate to its group rather than listing every pair, so recall is by group: a true pair
  // is found when both its texts end in one group (for datasketch's pairs as well).
  const recall = (s: Set<string>) => {
    const parent = Array.from({ length: TASKS }, (_, i) => i);
    const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i])));
    for (const k of s) {
      const [i, j] = k.split(',').map(Number);
      parent[find(i)] = find(j);
    }
    return truth.size
      ? [...truth].filter((k) => {
          const [i, j] = k.split(',').map(Number);
          return find(i) === find(j);
        }).length / truth.size
      : 1;
  };

  console.log(`## alight data benchmark — ${new Date().toISOString().slice(0, 10)}\n`);
  console.log(`${TASKS} synthetic SWE-smith-like tasks (2% exact copies, 4% near copies with one word changed).\n`);
  console.log(
    `import + clean + dedupe: ${pipe.seconds.toFixed(1)} s (${Math.round(TASKS / pipe.seconds)} tasks/s; ` +
      `import ${pipe.phases.import.toFixed(1)} s, ` +
      `clean ${pipe.phases.clean.toFixed(1)} s, dedupe ${pipe.phases.dedupe.toFixed(1)} s), ` +
      `peak RSS ${pipe.rssMb.toFixed(0)} MB; ` +
      `${pipe.imported} imported, ${pipe.dropped} dropped by clean, ${pipe.duplicates} as duplicates.\n`,
  );
  console.log(
    `JSONL reader over the ${(statSync(file).size / 2 ** 20).toFixed(0)} MiB file: ` +
      `${readerSeconds.toFixed(2)} s; readline + JSON.parse ` +
      `${readlineSeconds.toFixed(2)} s (${(readerSeconds / readlineSeconds).toFixed(2)}×).\n`,
  );
  console.log(
    '| near-dedupe (128 perms, 5-word shingles, Jaccard ≥ 0.8) | seconds | ' +
      'tasks/s | bands × rows | verified links | recall on a 5k sample (by group) |',
  );
  console.log('|---|--:|--:|--:|--:|--:|');
  console.log(
    `| alight | ${oursSeconds.toFixed(1)} | ${Math.round(TASKS / oursSeconds)} | ` +
      `${ours.bands} × ${ours.rows} | ${ourSet.size} | ${recall(ourSet).toFixed(3)} |`,
  );
  console.log(
    `| datasketch ${theirs.version} MinHashLSH | ${theirs.seconds.toFixed(1)} ` +
      `| ${Math.round(TASKS / theirs.seconds)} | ${theirs.bands} × ` +
      `${theirs.rows} | ${theirSet.size} | ${recall(theirSet).toFixed(3)} |`,
  );
  console.log(
    `\nalight is ${(theirs.seconds / oursSeconds).toFixed(1)}× ` +
      `datasketch's throughput; pairs found by both: ${common} ` +
      `(only alight: ${ourSet.size - common}, only datasketch: ` +
      `${theirSet.size - common}); exact pairs in the sample: ${truth.size}.`,
  );

  // A file of about 2 GB (the same tasks, each with 20 KB of hints) imported in constant memory.
  const bigFile = join(dir, 'big.jsonl');
  const big = createWriteStream(bigFile);
  const hints = 'h'.repeat(20_000);
  for (let i = 0; i < BIG_TASKS; i++)
    if (!big.write(`${JSON.stringify({ ...task(i, statements[i % TASKS]), hints_text: hints })}\n`))
      await once(big, 'drain');
  big.end();
  await once(big, 'finish');
  const bigChild = fork(import.meta.filename, ['import-only', join(dir, 'big.db'), bigFile], {
    execArgv: ['--import', 'tsx'],
  });
  const bigRun = await new Promise<{ seconds: number; rssMb: number; imported: number }>((resolve) =>
    bigChild.once('message', resolve as never),
  );
  console.log(
    `\nimport of a ${(statSync(bigFile).size / 2 ** 30).toFixed(2)} GiB JSONL ` +
      `(${BIG_TASKS} tasks with 20 KB of hints each): ` +
      `${bigRun.seconds.toFixed(1)} s, peak RSS ${bigRun.rssMb.toFixed(0)} MB, ${bigRun.imported} imported.`,
  );

  // Templated statements (SWE-smith's kind): one LSH bucket holds them all; near-dedupe must stay linear in it.
  console.log(
    '\n| templated statements (one word differs) | import + clean + dedupe, s | dedupe, s | peak RSS, MB | dropped |',
  );
  console.log('|--:|--:|--:|--:|--:|');
  for (const n of [6000, 50_000]) {
    const r = await pipelineRun(
      dir,
      `templated-${n}`,
      Array.from({ length: n }, (_, i) => ({ ...task(i, templated(i)) })),
    );
    console.log(
      `| ${n} | ${r.seconds.toFixed(1)} | ${r.phases.dedupe.toFixed(1)} | ${r.rssMb.toFixed(0)} | ${r.duplicates} |`,
    );
  }

  // A million small tasks through every stage and an export, in one process.
  const many = generate(MILLION);
  const million = await pipelineRun(
    dir,
    'million',
    { length: MILLION, map: (i: number) => task(i, many[i]) },
    join(dir, 'million-out.jsonl'),
  );
  console.log(
    `\n${MILLION} small tasks, import → clean → dedupe → export: ` +
      `${million.seconds.toFixed(0)} s (import ${million.phases.import.toFixed(0)} s, ` +
      `clean ${million.phases.clean.toFixed(0)} s, dedupe ` +
      `${million.phases.dedupe.toFixed(0)} s, export ${million.phases.export.toFixed(0)} s), ` +
      `peak RSS ${million.rssMb.toFixed(0)} MB; ${million.duplicates} duplicates.`,
  );
  rmSync(dir, { recursive: true, force: true });
}

type PipelineRun = {
  seconds: number;
  phases: Record<string, number>;
  rssMb: number;
  imported: number;
  dropped: number;
  duplicates: number;
};

/** Writes the rows as JSONL and runs the pipeline on them in a process of its own (its peak RSS is the pipeline's). */
async function pipelineRun(
  dir: string,
  name: string,
  rows: Record<string, unknown>[] | { length: number; map: (i: number) => Record<string, unknown> },
  exportTo?: string,
): Promise<PipelineRun> {
  const file = join(dir, `${name}.jsonl`);
  const out = createWriteStream(file);
  for (let i = 0; i < rows.length; i++) {
    const r = Array.isArray(rows) ? rows[i] : rows.map(i);
    if (!out.write(`${JSON.stringify(r)}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  const child = fork(
    import.meta.filename,
    ['pipeline', join(dir, `${name}.db`), file, ...(exportTo ? [exportTo] : [])],
    { execArgv: ['--import', 'tsx'] },
  );
  return new Promise((resolve) => child.once('message', resolve as never));
}

/** A 60-word statement of one template with one word that differs per task. */
function templated(i: number): string {
  const words = Array.from({ length: 60 }, (_, k) => `t${k}`);
  words[30] = `v${i}`;
  return words.join(' ');
}

/**
 * Statements of 60–120 words; every 50th task copies an earlier one exactly, every 20th copies one with a word
 * changed.
 */
function generate(n: number): string[] {
  let seed = 7;
  const next = (): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed >>> 8;
  };
  const vocabulary = Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}`);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    if (i > 0 && i % 50 === 0) {
      out.push(out[next() % i]);
      continue;
    }
    if (i > 0 && i % 20 === 0) {
      const words = out[next() % i].split(' ');
      words[next() % words.length] = vocabulary[next() % vocabulary.length];
      out.push(words.join(' '));
      continue;
    }
    out.push(Array.from({ length: 60 + (next() % 60) }, () => vocabulary[next() % vocabulary.length]).join(' '));
  }
  return out;
}

function task(i: number, statement: string): Record<string, unknown> {
  const repo = `swesmith/org${i % 300}__proj${i % 300}.${(i % 300).toString(16).padStart(8, '0')}`;
  const file = `src/module_${i % 97}.py`;
  return {
    instance_id: `${repo.slice(9)}.func_pm_op_change__${i.toString(36)}`,
    repo,
    base_commit: ((i * 2654435761) >>> 0).toString(16).padStart(40, '0'),
    patch:
      `diff --git a/${file} b/${file}\nindex 1..2 100644\n--- a/${file}\n+++ b/${file}\n` +
      `@@ -${i % 500} +${i % 500} @@\n-    return a + b  # ${i}\n+    return a - b  # ${i}\n`,
    problem_statement: statement,
    FAIL_TO_PASS: [`tests/test_${i % 97}.py::test_case_${i}`],
    PASS_TO_PASS: [`tests/test_${i % 97}.py::test_other`],
    created_at: new Date(1_700_000_000_000 + i * 60_000).toISOString(),
    image_name: `swesmith.x86_64.${repo.slice(9)}`,
  };
}
