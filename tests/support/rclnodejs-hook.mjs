// For tests only: maps the specifier `rclnodejs` to the remote stand-in
// (tests/support/rclnodejs-standin-remote.ts) in a process started with
// NODE_OPTIONS=--import=<this file>; see tests/support/standin-graph.ts. Where the suite runs compiled
// (scripts/run-tests.mjs: ARMGATE_TEST_BUILD names the build, which holds the stand-in compiled, a CHILD_ENTRIES file
// of scripts/compile-tests.mjs) the mapping names that copy and nothing else is registered: tsx's hooks compiled the
// stand-in and its imports in every sequence runner the tests forked (~0.3 s of CPU each). Else the stand-in is the
// TypeScript source, and tsx is registered too (after the mapping: hooks registered later run first, and tsx's resolve
// must see what the mapping answers).
import { existsSync } from 'node:fs';
import { register } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const build = process.env.ARMGATE_TEST_BUILD;
const compiled = build ? path.join(build, 'tests', 'support', 'rclnodejs-standin-remote.mjs') : undefined;
if (compiled && existsSync(compiled)) {
  register('./rclnodejs-resolve.mjs', import.meta.url, { data: { standin: pathToFileURL(compiled).href } });
} else {
  register('./rclnodejs-resolve.mjs', import.meta.url, {
    data: { standin: new URL('./rclnodejs-standin-remote.ts', import.meta.url).href },
  });
  const { register: registerTsx } = await import('tsx/esm/api');
  registerTsx();
}
