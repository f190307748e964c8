import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configKeys, withReference } from '../../src/config/reference.js';
import { configSchema } from '../../src/config/schema.js';

const page = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');

describe('the configuration reference', () => {
  it('in docs/configuration.md is the one the schema generates (npm run docs:config rewrites it)', () => {
    expect(page).toBe(withReference(page));
  });

  it('lists every setting the schema accepts, each with its description, type and default', () => {
    const keys = configKeys();
    const byKey = new Map(keys.map((k) => [k.key, k]));
    expect(byKey.get('train.batch.purposes')).toMatchObject({ type: expect.stringMatching(/^list of main .*router/) });
    expect(byKey.get('train.lora.rank')).toMatchObject({ type: 'integer', default: 0 });
    expect(byKey.get('k8s.resources')).toMatchObject({ type: 'object', default: undefined });
    // The defaults listed are the ones a config gets (a section that is absent until set, reward.judge, aside).
    const defaults = configSchema.parse({}) as Record<string, unknown>;
    const at = (path: string[]) => path.reduce<unknown>((o, k) => (o as Record<string, unknown>)?.[k], defaults);
    for (const k of keys) {
      const path = k.key.split('.');
      if (k.default !== undefined && at(path.slice(0, -1)) !== undefined) expect(at(path), k.key).toEqual(k.default);
    }
    expect(keys.length).toBeGreaterThan(100);
    expect(() => withReference('# no markers')).toThrow(/markers/);
  });
});
