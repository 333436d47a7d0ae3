// The esbuild options `npm start`'s build (scripts/start.mjs) and the test build (scripts/compile-tests.mjs) share.

/**
 * The packages imported from node_modules as they are, not compiled into the bundle: rclnodejs (native code, imported by
 * name when the ROS 2 backend starts), ws's optional native helpers, and the packages read as files at run time
 * (the docs pages' assets, the live page's) or run as a process (tsx, esbuild).
 */
export const PACKAGES_KEPT = [
  'rclnodejs',
  'bufferutil',
  'utf-8-validate',
  'swagger-ui-dist',
  'redoc',
  'tsx',
  'esbuild',
];

/** A package written as CommonJS requires node's modules with the `require` of a CommonJS module. */
const BANNER =
  "import { createRequire as armgateCreateRequire } from 'node:module';\nconst require = armgateCreateRequire(import.meta.url);";

/** ES modules for node 20, the modules shared between entries in chunks, the packages compiled in but `kept`. */
export function nodeBundle(kept = PACKAGES_KEPT) {
  return {
    bundle: true,
    splitting: true,
    external: kept,
    banner: { js: BANNER },
    platform: 'node',
    format: 'esm',
    target: 'node20',
  };
}
