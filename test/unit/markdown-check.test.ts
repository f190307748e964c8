import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchorsOf, checkTree, linkProblems, proseLines } from '../../scripts/check-markdown.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const docs = join(ROOT, 'docs', 'page.md');
const read = (path: string): string | null => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
};

describe('the Markdown check', () => {
  it('finds a doubled fence (the one that hid the README) and a fence never closed', () => {
    const doubled = '```sh\nnpm test\n```\n```\n\n## Hidden\n\n```sh\nnpm run demo\n```\n';
    expect(proseLines(doubled).problems).toEqual([
      { line: 8, message: 'a fence with "sh" inside the block opened at line 4' },
    ]);
    expect(proseLines('```\na\n````\n## Seen\n').problems).toEqual([]);
    expect(proseLines('text\n~~~\ncode\n').problems).toEqual([{ line: 2, message: 'a code fence never closed' }]);
  });

  it("makes GitHub's anchors: punctuation dropped, code and links kept as text, repeats numbered", () => {
    const page = '# A real model: `npm run bench:learn` (2026-12-04)\n## Results\n## Results\n<a id="flags"></a>\n';
    expect([...anchorsOf(page)]).toEqual([
      'a-real-model-npm-run-benchlearn-2026-12-04',
      'results',
      'results-1',
      'flags',
    ]);
    expect(anchorsOf('```\n# not a heading\n```\n').size).toBe(0);
  });

  it('finds links to missing files and headings, and leaves code, URLs and good links alone', () => {
    const text = [
      'see [a](training.md#no-such-heading), [b](nowhere.md) and [c](../README.md#two-commands)',
      '[d](https://example.com/x.md) `[e](missing.md)` [f](#here)',
      '```\n[g](missing.md)\n```',
      '## Here',
    ].join('\n');
    expect(linkProblems(docs, text, read)).toEqual([
      { file: docs, line: 1, message: 'links to #no-such-heading, a heading training.md does not have' },
      { file: docs, line: 1, message: 'links to nowhere.md, which does not exist' },
    ]);
  });

  it("passes on the repository's own pages", () => {
    expect(checkTree(ROOT)).toEqual([]);
  });
});
