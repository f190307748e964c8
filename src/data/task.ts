import { z } from 'zod';
import { patchHash, patchStats, sha256, statementHash, wordCount } from './patch.js';
import { maxRowBytes } from './read.js';

export const formats = ['swe-bench', 'swe-smith', 'swe-gym', 'swe-rebench'] as const;
export type Format = (typeof formats)[number];
export const exportFormats = ['jsonl', 'parquet'] as const;
export type ExportFormat = (typeof exportFormats)[number];

/** FAIL_TO_PASS / PASS_TO_PASS: a list, or a JSON string holding one (SWE-bench's Hugging Face columns). */
const testList = (missingAsEmpty: boolean) =>
  z
    .unknown()
    .optional()
    .transform((v, ctx): string[] => {
      if (missingAsEmpty && (v === undefined || v === null)) return [];
      let list = v;
      if (typeof v === 'string') {
        try {
          list = JSON.parse(v);
        } catch {
          list = null;
        }
      }
      if (Array.isArray(list) && list.every((t) => typeof t === 'string')) return list as string[];
      ctx.addIssue({
        code: 'custom',
        message: `expected a list of test names or a JSON string holding one, got ${JSON.stringify(v)?.slice(0, 60)}`,
      });
      return z.NEVER;
    });
// U+0000 is not text: git takes a patch holding one for binary and will not apply it, and a shell script or a command
// argument ends at it. One rule for every format: JSONL's \u0000 and a Parquet string's NUL byte alike.
const noNul = [
  (s: string | null) => s === null || !s.includes('\0'),
  'holds a NUL character (U+0000), which text here cannot',
] as const;
const text = z
  .string()
  .nullish()
  .transform((s) => s ?? '')
  .refine(...noNul);
const optionalText = z
  .union([z.string(), z.number()])
  .nullish()
  .transform((s) => (s === null || s === undefined ? null : String(s)))
  .refine(...noNul);

// An id with a lone surrogate would be stored as U+FFFD, and then no command could name it.
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const identity = z
  .string()
  .min(1)
  .refine((s) => !loneSurrogate.test(s), 'not valid Unicode (a lone surrogate)')
  .refine(...noNul);

/** A row of any of the SWE-bench-style exports, as read; unknown columns are kept aside. */
export const rawTask = z
  .object({
    instance_id: identity,
    repo: identity,
    base_commit: z
      .string()
      .nullish()
      .transform((s) => s ?? null)
      .refine(...noNul),
    patch: z.string().refine(...noNul),
    test_patch: text,
    problem_statement: text,
    hints_text: text,
    created_at: z
      .union([z.string(), z.number()])
      .nullish()
      .transform((v, ctx) => {
        if (v === null || v === undefined || v === '') return null;
        // Numbers below 1e11 are epoch seconds (until the year 5138), larger ones milliseconds.
        const ms = typeof v === 'number' ? (Math.abs(v) < 1e11 ? v * 1000 : v) : Date.parse(v);
        if (!Number.isFinite(ms) || !Number.isFinite(new Date(ms).getTime())) {
          ctx.addIssue({ code: 'custom', message: `not a date: ${JSON.stringify(v)}` });
          return z.NEVER;
        }
        // Years past 9999 are written `+275760-…`, which sorts before every ordinary date: such a date is an error.
        const year = new Date(ms).getUTCFullYear();
        if (year < 1 || year > 9999) {
          ctx.addIssue({ code: 'custom', message: `a date in the year ${year}: ${JSON.stringify(v)}` });
          return z.NEVER;
        }
        return new Date(ms).toISOString(); // one form, so that dates compare as strings
      }),
    version: optionalText,
    environment_setup_commit: optionalText,
    FAIL_TO_PASS: testList(false),
    PASS_TO_PASS: testList(true),
    image_name: optionalText,
    eval_script: optionalText,
    install_config: z.unknown().optional(),
    difficulty: optionalText,
    patch_kind: z.enum(['fix', 'bug']).optional(),
  })
  .passthrough();

/** A task as stored: the SWE-bench columns normalised, and what the cleaning rules and dedupe need. */
export interface DataTask {
  uid: string;
  instance_id: string;
  source: string;
  format: Format;
  repo: string;
  base_commit: string | null;
  patch: string;
  /** `fix`: the gold patch (SWE-bench); `bug`: the bug-introducing diff whose reverse is the fix (SWE-smith). */
  patch_kind: 'fix' | 'bug';
  test_patch: string;
  problem_statement: string;
  hints_text: string;
  created_at: string | null;
  version: string | null;
  environment_setup_commit: string | null;
  fail_to_pass: string[];
  pass_to_pass: string[];
  image_name: string | null;
  eval_script: string | null;
  install_config: unknown;
  difficulty: string | null;
  extra: Record<string, unknown>;
  n_files: number;
  n_source_files: number;
  n_hunks: number;
  n_lines: number;
  n_source_lines: number;
  patch_bytes: number;
  n_f2p: number;
  n_p2p: number;
  ps_chars: number;
  ps_words: number;
  patch_sha: string;
  ps_sha: string;
  file: string;
  line: number;
}

const known = new Set(Object.keys(rawTask.shape));

/**
 * Which export a row comes from, when the user did not say: SWE-smith's repos and ids, SWE-rebench's install_config.
 */
export function detectFormat(row: Record<string, unknown>): Format {
  const repo = String(row.repo ?? '');
  const id = String(row.instance_id ?? '');
  if (repo.startsWith('swesmith/') || /\.(pr_\d+|lm_modify__|func_pm_|combine_file__|combine_module__)/.test(id))
    return 'swe-smith';
  // A column that is present but null (an export's, where other rows have it) says nothing.
  if ((row.install_config ?? null) !== null || (row.meta ?? null) !== null) return 'swe-rebench';
  return 'swe-bench';
}

/** Where a row comes from: its source, its format (or `auto`), its file and its line there. */
export type RowAt = { source: string; format: Format | 'auto'; file: string; line: number };

export type Parsed = { ok: true; task: DataTask } | { ok: false; reason: string };

/** Validates one row and normalises it; an invalid row comes back with the reason, never silently dropped. */
export function parseTask(row: unknown, at: RowAt): Parsed {
  try {
    return parseRow(row, at);
  } catch (err) {
    // JSON.stringify of a 100,000-deep value (Parquet's and JSON documents' rows are not depth-checked as text)
    // overflows the stack.
    if (err instanceof RangeError)
      return { ok: false, reason: `a value nests too deep or is too large to store (${err.message})` };
    throw err;
  }
}

function parseRow(row: unknown, at: RowAt): Parsed {
  if (typeof row !== 'object' || row === null || Array.isArray(row)) return { ok: false, reason: 'not a JSON object' };
  const big = ['problem_statement', 'patch', 'test_patch', 'hints_text'].reduce(
    (n, k) => n + String((row as Record<string, unknown>)[k] ?? '').length,
    0,
  );
  if (big > maxRowBytes)
    return { ok: false, reason: `its text is over ${maxRowBytes / 2 ** 20} MiB (rows must be smaller)` };
  const parsed = rawTask.safeParse(row);
  if (!parsed.success) {
    return {
      ok: false,
      reason: parsed.error.issues.map((i) => `${i.path.join('.') || '(row)'}: ${i.message}`).join('; '),
    };
  }
  const format = at.format === 'auto' ? detectFormat(row as Record<string, unknown>) : at.format;
  const task = normalised(parsed.data, format, at);
  // The same row imported again under the same source gets the same uid: importing a file again changes nothing.
  const { file: _f, line: _l, ...content } = task;
  return { ok: true, task: { uid: sha256(JSON.stringify(content)).slice(0, 24), ...task } };
}

/** A valid row in alight's columns, with the patch's and the statement's statistics. */
function normalised(r: z.infer<typeof rawTask>, format: Format, at: RowAt): Omit<DataTask, 'uid'> {
  const stats = patchStats(r.patch);
  // Null columns are absent columns: a Parquet export cannot tell them apart, and a row must re-import as it was.
  const extra = Object.fromEntries(
    Object.entries(r).filter(([k, v]) => !known.has(k) && v !== null && v !== undefined),
  );
  return {
    instance_id: r.instance_id,
    source: at.source,
    format,
    repo: r.repo,
    base_commit: r.base_commit,
    patch: r.patch,
    patch_kind: r.patch_kind ?? (format === 'swe-smith' ? 'bug' : 'fix'),
    test_patch: r.test_patch,
    problem_statement: r.problem_statement,
    hints_text: r.hints_text,
    created_at: r.created_at,
    version: r.version,
    environment_setup_commit: r.environment_setup_commit,
    fail_to_pass: r.FAIL_TO_PASS,
    pass_to_pass: r.PASS_TO_PASS,
    image_name: r.image_name,
    eval_script: r.eval_script,
    install_config: r.install_config ?? null,
    difficulty: r.difficulty,
    extra,
    n_files: stats.files.length,
    n_source_files: stats.sourceFiles.length,
    n_hunks: stats.hunks,
    n_lines: stats.lines,
    n_source_lines: stats.sourceLines,
    patch_bytes: Buffer.byteLength(r.patch),
    n_f2p: r.FAIL_TO_PASS.length,
    n_p2p: r.PASS_TO_PASS.length,
    ps_chars: r.problem_statement.trim().length,
    ps_words: wordCount(r.problem_statement),
    patch_sha: patchHash(r.patch),
    ps_sha: statementHash(r.problem_statement),
    file: at.file,
    line: at.line,
  };
}

/** A task in SWE-bench's own columns (F2P/P2P as JSON strings, as on Hugging Face), for other tools to read. */
export function toSweBenchRow(t: DataTask): Record<string, unknown> {
  return {
    // columns alight does not interpret (SWE-bench v5's image, log_parser, eval_type; SWE-rebench's meta) pass through
    ...t.extra,
    instance_id: t.instance_id,
    repo: t.repo,
    base_commit: t.base_commit,
    patch: t.patch,
    test_patch: t.test_patch,
    problem_statement: t.problem_statement,
    hints_text: t.hints_text,
    created_at: t.created_at,
    version: t.version,
    environment_setup_commit: t.environment_setup_commit,
    FAIL_TO_PASS: JSON.stringify(t.fail_to_pass),
    PASS_TO_PASS: JSON.stringify(t.pass_to_pass),
    patch_kind: t.patch_kind,
    ...(t.image_name !== null && { image_name: t.image_name }),
    ...(t.eval_script !== null && { eval_script: t.eval_script }),
    ...(t.install_config !== null && { install_config: t.install_config }),
    ...(t.difficulty !== null && { difficulty: t.difficulty }),
  };
}
