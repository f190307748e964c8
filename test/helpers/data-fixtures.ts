import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

// An in-project task set (no upstream rows): each row exists to exercise one rule, encoding, duplicate kind or bad
// input, and its id says which. Repos are invented (acme/*) except where a benchmark overlap is the point.

const diff = (files: string[], body = '-old\n+new'): string =>
  files
    .map(
      (f) => `diff --git a/${f} b/${f}\nindex 1111111..2222222 100644\n--- a/${f}\n+++ b/${f}\n@@ -1 +1 @@\n${body}\n`,
    )
    .join('');

const vocabulary = (
  'layout engine widget margin resize theme compact render child parent frame window scroll cursor focus ' +
  'keyboard mouse event handler timer thread queue buffer cache ' +
  'index column table footer header export import parser token ' +
  'encoder decoder stream socket request response header cookie ' +
  'session user account profile setting option flag default ' +
  'value number string list map set tree node edge graph path ' +
  'file folder archive backup restore sync merge branch commit'
).split(' ');

/**
 * A problem statement of 45 words drawn from the vocabulary by a generator seeded with `topic`: unrelated topics share
 * little.
 */
const statement = (topic: string): string => {
  let seed = [...topic].reduce((h, c) => Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0, 2166136261);
  const next = (): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed >>> 8;
  };
  return `The ${Array.from({ length: 45 }, () => vocabulary[next() % vocabulary.length]).join(' ')} fails.`;
};

export function row(id: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    instance_id: id,
    repo: 'acme/widgets',
    base_commit: `${'a'.repeat(39)}${id.length % 10}`,
    patch: diff([`src/${id}.py`]),
    test_patch: diff([`tests/test_${id}.py`]),
    problem_statement: statement(id),
    hints_text: '',
    created_at: '2024-01-01T00:00:00Z',
    version: '1.0',
    environment_setup_commit: 'b'.repeat(40),
    FAIL_TO_PASS: JSON.stringify([`tests/test_${id}.py::test_fix`]),
    PASS_TO_PASS: JSON.stringify(['tests/test_other.py::test_ok']),
    ...over,
  };
}

/** Writes the fixture files into `dir`; returns their paths and the expected outcome per instance id. */
export function writeDataFixtures(dir: string) {
  const a = [
    row('acme__widgets-1'),
    row('acme__widgets-2', { FAIL_TO_PASS: '[]' }),
    row('acme__widgets-3', { problem_statement: 'Fix it.' }),
    row('acme__widgets-4', { patch: diff(Array.from({ length: 16 }, (_, i) => `src/m${i}.py`)) }),
    row('acme__widgets-5', { patch: '' }),
    row('acme__widgets-6', {
      PASS_TO_PASS: JSON.stringify(Array.from({ length: 200 }, (_, i) => `tests/t.py::test_${i}`)),
    }),
    row('acme__widgets-1', { created_at: '2024-06-01T00:00:00Z', hints_text: 'a later copy' }),
    row('acme__widgets-7', {
      patch: diff(['src/acme__widgets-1.py']),
      problem_statement: statement('slider'),
      created_at: '2024-02-01T00:00:00Z',
    }),
    row('acme__widgets-8', {
      problem_statement: statement('acme__widgets-9').replace(/ fails\.$/, ' breaks.'),
      created_at: '2024-03-01T00:00:00Z',
    }),
    row('django__django-11099', { repo: 'django/django' }),
    row('sympy__sympy-99999', { repo: 'sympy/sympy' }),
    row('acme__widgets-11', { patch: diff(['src/a.py', 'src/b.py', 'src/c.py', 'src/d.py', 'src/e.py', 'src/f.py']) }),
  ];
  const lines = a.map((r) => JSON.stringify(r));
  lines.push(JSON.stringify(row('acme__widgets-bad-type', { FAIL_TO_PASS: 5 })));
  lines.push(JSON.stringify(row('acme__widgets-truncated')).slice(0, 80));
  lines.push(JSON.stringify((({ instance_id: _, ...rest }) => rest)(row('no-id'))));
  const first = join(dir, 'swe-bench-style.jsonl');
  writeFileSync(first, `${lines.join('\n')}\n`);

  // SWE-Gym-style JSON list, FAIL_TO_PASS as real lists.
  const listed = (r: Record<string, unknown>) => ({
    ...r,
    FAIL_TO_PASS: JSON.parse(r.FAIL_TO_PASS as string),
    PASS_TO_PASS: JSON.parse(r.PASS_TO_PASS as string),
  });
  const second = join(dir, 'swe-gym-style.json');
  writeFileSync(
    second,
    JSON.stringify([
      listed(row('acme__widgets-9', { created_at: '2023-12-01T00:00:00Z' })),
      listed(
        row('acme__widgets-10', {
          problem_statement:
            'The Exporter drops the last row when the table has exactly one hundred rows and a footer.',
        }),
      ),
      listed(
        row('acme__widgets-12', {
          problem_statement:
            '  the exporter DROPS the last row when the table has exactly one hundred rows and a footer.  ',
          created_at: '2025-01-01T00:00:00Z',
        }),
      ),
    ]),
  );

  // SWE-smith: the patch introduces the bug; an image names the environment.
  const smith = join(dir, 'swe-smith.jsonl');
  writeFileSync(
    smith,
    `${JSON.stringify({
      instance_id: 'acme__gadgets.abc12345.func_pm_remove_assign__x1',
      repo: 'swesmith/acme__gadgets.abc12345',
      base_commit: 'c'.repeat(40),
      patch: diff(['gadgets/core.py'], '-    total = 0\n+'),
      problem_statement: 'Summing an empty gadget list raises UnboundLocalError instead of returning zero.',
      FAIL_TO_PASS: ['tests/test_core.py::test_empty_sum'],
      PASS_TO_PASS: ['tests/test_core.py::test_sum'],
      created_at: '2025-02-01T00:00:00Z',
      image_name: 'swesmith.x86_64.acme__gadgets.abc12345',
    })}\n`,
  );

  // A reference statement sharing a long run of words with acme__widgets-10 (flagged, not dropped).
  const reference = join(dir, 'reference.jsonl');
  writeFileSync(
    reference,
    `${JSON.stringify({
      instance_id: 'other__bench-1',
      repo: 'other/bench',
      base_commit: 'd'.repeat(40),
      patch: diff(['x.py']),
      problem_statement:
        'Reported upstream: the exporter drops the last row when the table has exactly one hundred rows ' +
        'and a footer, again.',
    })}\n`,
  );

  return {
    files: [first, second, smith],
    reference,
    invalid: [
      ['swe-bench-style.jsonl', 13, /FAIL_TO_PASS/],
      ['swe-bench-style.jsonl', 14, /not JSON/],
      ['swe-bench-style.jsonl', 15, /instance_id/],
    ] as const,
    /**
     * Expected after import → clean → dedupe → decontaminate (defaults): kept ids, and the rule each other id is
     * dropped by.
     */
    kept: [
      'acme__widgets-1',
      'acme__widgets-11',
      'acme__widgets-9',
      'acme__widgets-10',
      'acme__gadgets.abc12345.func_pm_remove_assign__x1',
    ],
    dropped: {
      'acme__widgets-2': 'empty-f2p',
      'acme__widgets-3': 'short-statement',
      'acme__widgets-4': 'files-changed',
      'acme__widgets-5': 'files-changed',
      'acme__widgets-6': 'too-many-tests',
      'acme__widgets-7': 'duplicate',
      'acme__widgets-8': 'near-duplicate',
      'acme__widgets-12': 'duplicate',
      'django__django-11099': 'benchmark-id',
      'sympy__sympy-99999': 'benchmark-repo',
    } as Record<string, string>,
  };
}
