import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// docs/layout.md's "Layers": the order, lowest first, and the upward imports it names with their reasons.
const root = resolve(import.meta.dirname, '../..');
const layout = readFileSync(join(root, 'docs/layout.md'), 'utf8');
const section = layout.slice(layout.indexOf('## Layers'), layout.indexOf('## Where new code goes'));
const order = section
  .match(/^`([a-z0-9 -]+(?: < [a-z0-9 -]+)+)`$/m)![1]
  .split(' < ')
  .map((layer) => layer.split(' '));
const layerOf = new Map(order.flatMap((names, i) => names.map((name) => [name, i] as const)));
const allowed = [...section.matchAll(/^- `(src\/[^`]+)` → `(src\/[^`]+)`/gm)].map(([, from, to]) => `${from} → ${to}`);

const files = (dir: string): string[] =>
  readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : [],
  );
/** The relative modules a file imports or re-exports from, as paths from the repository (src/x/y.ts). */
const imports = (file: string): string[] =>
  [...readFileSync(join(root, file), 'utf8').matchAll(/^(?:import|export)\b[^;]*?\bfrom '(\.[^']+)'/gms)].map((m) =>
    relative(root, resolve(root, dirname(file), m[1])).replace(/\.js$/, '.ts'),
  );
/** A module's unit: its folder under src/ (or commands), or a top-level file's name. */
const unit = (path: string): string => {
  const [top, name, rest] = path.split('/');
  if (top === 'commands') return 'commands';
  return rest === undefined ? name.replace(/\.tsx?$/, '') : name;
};
/** An exception names a file, or (ending in /) a folder, that the importing file may reach upward. */
const covers = (exception: string, from: string, to: string) => {
  const [f, t] = exception.split(' → ');
  return from === f && (to === t || (t.endsWith('/') && to.startsWith(t)));
};

describe('layers (docs/layout.md)', () => {
  it('every module of src/ and commands/ is in a layer, and no import runs upward but the named few', () => {
    const sources = [...files('src'), ...files('commands')];
    expect(sources.filter((f) => !layerOf.has(unit(f)))).toEqual([]);
    const upward = sources.flatMap((from) =>
      imports(from)
        .filter((to) => layerOf.get(unit(to))! > layerOf.get(unit(from))!)
        .map((to) => ({ from, to })),
    );
    const unexplained = upward.filter(({ from, to }) => !allowed.some((a) => covers(a, from, to)));
    expect(unexplained.map(({ from, to }) => `${from} → ${to}`)).toEqual([]);
    // Each exception is still needed (an import that went away takes its line with it), and there are few.
    expect(allowed.filter((a) => !upward.some(({ from, to }) => covers(a, from, to)))).toEqual([]);
    expect(allowed.length).toBeLessThanOrEqual(4);
  });

  it('no command module imports another: what two commands share lives in src/', () => {
    const shared = new Set(['index.ts', 'flags.ts', 'options.ts', 'shared.ts']);
    const isCommand = (path: string) => /^commands\/[^/]+\.ts$/.test(path) && !shared.has(path.split('/')[1]);
    const crossing = files('commands')
      .filter(isCommand)
      .flatMap((from) =>
        imports(from)
          .filter((to) => to !== from && isCommand(to))
          .map((to) => `${from} → ${to}`),
      );
    expect(crossing).toEqual([]);
  });
});
