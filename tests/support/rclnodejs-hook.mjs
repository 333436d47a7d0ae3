// For tests only: maps the specifier `rclnodejs` to the remote stand-in
// (tests/support/rclnodejs-standin-remote.ts) in a process started with
// NODE_OPTIONS=--import=<this file>; see tests/support/standin-graph.ts.
import { register } from 'node:module';

register('./rclnodejs-resolve.mjs', import.meta.url);
