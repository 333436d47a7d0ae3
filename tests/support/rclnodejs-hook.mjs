// For tests only: maps the specifier `rclnodejs` to the remote stand-in
// (tests/support/rclnodejs-standin-remote.ts) in a process started with
// NODE_OPTIONS=--import=<this file>; see tests/support/standin-graph.ts. The stand-in is TypeScript: tsx is registered
// here too (after the mapping: hooks registered later run first, and tsx's resolve must see what the mapping answers),
// for a process that runs compiled (a sequence runner forked by the compiled test suite, scripts/run-tests.mjs).
import { register } from 'node:module';
import { register as registerTsx } from 'tsx/esm/api';

register('./rclnodejs-resolve.mjs', import.meta.url);
registerTsx();
