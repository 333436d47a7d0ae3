import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { operations } from '../handlers/index.ts';
import { EVENTS_OPENAPI } from '../lib/http/events-openapi.ts';
import { buildOpenApiDocument } from '../lib/openapi/document.ts';
import { loadConfig } from '../lib/settings/load.ts';
import { PROJECT_ROOT } from '../lib/settings/resolve.ts';

/**
 * Writes openapi/openapi.json from the handler files with the supplied joint limits.
 * With --check it writes nothing and exits 1 when the committed file differs.
 */
const target = path.join(PROJECT_ROOT, 'openapi', 'openapi.json');
const loaded = await loadConfig(path.join(PROJECT_ROOT, 'settings.yaml'), { env: {} });
if (!loaded.ok || loaded.value.kind !== 'serve')
  throw new Error(`bundled settings: ${loaded.ok ? 'web disabled' : loaded.error}`);
const text = `${JSON.stringify(buildOpenApiDocument(operations, loaded.value.config.limits, EVENTS_OPENAPI), null, 2)}\n`;
if (process.argv.includes('--check')) {
  const committed = await readFile(target, 'utf8').catch(() => '');
  if (committed !== text) {
    process.stderr.write(
      'openapi/openapi.json differs from what the handlers produce: run `npm run build:openapi` and commit it\n',
    );
    process.exit(1);
  }
  process.stdout.write('openapi/openapi.json matches the handlers\n');
} else {
  await writeFile(target, text);
  process.stdout.write(`wrote ${path.relative(process.cwd(), target)}\n`);
}
