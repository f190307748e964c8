// `npm run docs:config`: rewrites the generated reference in docs/configuration.md from the config schema.
import { readFileSync, writeFileSync } from 'node:fs';
import { withReference } from '../src/config/reference.js';

const page = new URL('../docs/configuration.md', import.meta.url);
writeFileSync(page, withReference(readFileSync(page, 'utf8')));
