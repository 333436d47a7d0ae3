import type { Table } from './table.ts';

/**
 * One part of `npm run bench`. `run` measures and returns the tables to print; it must release
 * everything it starts (servers, contexts, workers, timers) before it resolves, so the bench
 * process ends by itself. Add a section by writing a module that exports one and listing it in
 * run.ts.
 */
export interface Section {
  /** Short name, used to pick sections on the command line: `npm run bench -- http fk`. */
  readonly id: string;
  /** What it measures, one line. */
  readonly description: string;
  run(): Promise<readonly Table[]>;
}
