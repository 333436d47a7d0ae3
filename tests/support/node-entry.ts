import { existsSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from './settings-file.ts';

/** A TypeScript file of the project as a node process starts it: the file to run and the options before it. */
export interface NodeEntry {
  readonly file: string;
  readonly execArgv: readonly string[];
}

/**
 * How a test starts one of the project's TypeScript files as a process of its own (a server, a child that holds
 * sockets or writes a bag): its compiled copy where the suite runs compiled (scripts/run-tests.mjs compiles the files
 * it lists in CHILD_ENTRIES beside the tests, in the directory ARMGATE_TEST_BUILD names), else the source through tsx
 * (a test file run alone with `node --import tsx --test`). Compiled, the child starts without tsx's hooks (~1 s of CPU).
 */
export function nodeEntry(file: string): NodeEntry {
  const build = process.env.ARMGATE_TEST_BUILD;
  const relative = path.relative(PROJECT_ROOT, file);
  if (build && !relative.startsWith('..')) {
    const compiled = path.join(build, relative.replace(/\.ts$/, '.mjs'));
    if (existsSync(compiled)) return { file: compiled, execArgv: [] };
  }
  return { file, execArgv: ['--import', 'tsx'] };
}
