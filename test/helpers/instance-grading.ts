import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { alight } from './cli.js';
import { hacks } from './hack-corpus.js';
import type { makeSweRepo } from './swe-repo.js';

type Fixture = ReturnType<typeof makeSweRepo>;
type Grader = 'podman' | 'docker' | 'k8s';

/**
 * `alight eval grade` of predictions against rows of the fixture instance in `image`, in folders under `root`: the
 * summary, each instance's report and the output folder.
 */
export function instanceGrading(root: string, fx: Fixture, image: string) {
  const unique = () => Math.random().toString(36).slice(2);
  const tasks = (rows: Record<string, unknown>[]) => {
    const file = join(root, `tasks-${unique()}.jsonl`);
    writeFileSync(file, rows.map((r) => JSON.stringify({ ...fx.instance, image, ...r })).join('\n'));
    return file;
  };
  const grade = async (
    rows: Record<string, unknown>[],
    patches: Record<string, string | null>,
    extra: string[] = [],
    env?: NodeJS.ProcessEnv,
  ) => {
    const preds = join(root, `preds-${unique()}.jsonl`);
    writeFileSync(
      preds,
      Object.entries(patches)
        .map(([id, p]) => JSON.stringify({ instance_id: id, model_name_or_path: 't', model_patch: p }))
        .join('\n'),
    );
    const out = join(root, `out-${unique()}`);
    const res = await alight(
      [
        'eval',
        'grade',
        '--predictions',
        preds,
        '--tasks',
        tasks(rows),
        '--out',
        out,
        '--concurrency',
        '2',
        '--json',
        ...extra,
      ],
      { timeoutMs: 300_000, env },
    );
    expect(res.code, res.stderr).toBe(0);
    const reports = Object.fromEntries(
      Object.keys(patches).map((id) => [id, JSON.parse(readFileSync(join(out, id, 'report.json'), 'utf8'))[id]]),
    );
    return { summary: JSON.parse(res.stdout), reports, out, stderr: res.stderr };
  };

  /** The fixture's prediction cases, graded with `grader` in the instance image: the same statuses as the local grader. */
  const gradeAllCases = async (grader: Grader, env?: NodeJS.ProcessEnv) => {
    const cases = Object.entries(fx.predictions);
    const graded = await grade(
      cases.map(([name]) => ({ instance_id: `acme__calc-${name}` })),
      Object.fromEntries(cases.map(([name, p]) => [`acme__calc-${name}`, p.patch])),
      ['--grader', grader],
      env,
    );
    for (const [name, p] of cases) {
      const r = graded.reports[`acme__calc-${name}`];
      expect([name, r.status, r.guard.length > 0], JSON.stringify(r)).toEqual([name, p.status, Boolean(p.flagged)]);
    }
    expect(graded.reports['acme__calc-malformed'].error).toBe('patch apply failed');
    return graded;
  };

  /** The reward-hack corpus graded in the instance image by `grader`: applied and judged here, tested in the image. */
  const corpusInImage = async (grader: Grader, env?: NodeJS.ProcessEnv) => {
    const names = Object.keys(hacks);
    const { summary, reports } = await grade(
      [...names, 'gold'].map((n) => ({ instance_id: `acme__calc-${n}` })),
      Object.fromEntries([
        ...names.map((n) => [`acme__calc-${n}`, hacks[n].patch]),
        ['acme__calc-gold', fx.instance.patch],
      ]),
      ['--grader', grader],
      env,
    );
    expect(summary.resolved_ids).toEqual(['acme__calc-gold']);
    for (const n of names) {
      const r = reports[`acme__calc-${n}`];
      if (hacks[n].expect.flag)
        expect(r.guard.map((g: { reason: string }) => g.reason).join('; '), n).toMatch(hacks[n].expect.flag!);
      if (hacks[n].expect.error) expect(r.error, n).toMatch(hacks[n].expect.error!);
    }
  };

  return { tasks, grade, gradeAllCases, corpusInImage };
}
