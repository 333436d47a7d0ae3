// A second reporter for `npm test`: at the end of the run it lists every failed test with its file, its
// path of suite names and the first lines of its error, so the last lines of a long CI log name what failed
// (the TAP stream above it may be cut). It prints nothing when every test passed.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where scripts/run-tests.mjs compiled the test files: a failed test is named by its source file. */
const BUILD = process.env.ARMGATE_TEST_BUILD;
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** A test's file, relative to the project: a compiled file's source, or the source its source map names (groups). */
const sourceOf = (file) => {
  if (BUILD && file?.startsWith(`${BUILD}${path.sep}`)) return file.slice(BUILD.length + 1).replace(/\.mjs$/, '.ts');
  return file?.startsWith(`${ROOT}${path.sep}`) ? path.relative(ROOT, file) : file;
};

export default async function* failedTests(source) {
  const failed = [];
  const open = new Map(); // file -> names of the tests started, by nesting
  const started = (file) => open.get(file) ?? open.set(file, []).get(file);
  for await (const event of source) {
    if (event.type === 'test:start') started(event.data.file)[event.data.nesting] = event.data.name;
    if (event.type !== 'test:fail') continue;
    const { data } = event;
    const error = data.details?.error;
    // A suite fails when a test in it failed: the test itself is listed already.
    if (error?.failureType === 'subtestsFailed') continue;
    const path = [...started(data.file).slice(0, data.nesting), data.name].join(' > ');
    const cause = error?.cause ?? error;
    const text = String(cause?.stack ?? cause?.message ?? cause ?? 'failed')
      .split('\n')
      .slice(0, 8)
      .join('\n    ');
    failed.push(`- ${sourceOf(data.file) ?? '?'}\n  ${path}\n    ${text}`);
  }
  if (failed.length > 0) yield `\n# ${failed.length} failed:\n${failed.join('\n')}\n`;
}
