// `npm run worker:schema`: writes src/worker/settings.ts's schema where the Python worker checks its init against it.
import { writeFileSync } from 'node:fs';
import { workerSettingsJsonSchema } from '../src/worker/settings.js';

const file = new URL('../python/alight_worker/settings.schema.json', import.meta.url);
writeFileSync(file, `${JSON.stringify(workerSettingsJsonSchema(), null, 2)}\n`);
