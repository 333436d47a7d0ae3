import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  arrowsUp,
  cycles,
  FLOORS,
  floorOf,
  folderCycles,
  type ImportGraph,
  libImportingHandlers,
  readImportGraph,
  specifiersOf,
} from '../scripts/import-graph.ts';

/** A graph of the given arrows (file -> files). */
function graphOf(arrows: Record<string, string[]>): ImportGraph {
  const files = [...new Set([...Object.keys(arrows), ...Object.values(arrows).flat()])].sort();
  return {
    files,
    arrows: new Map(files.map((f) => [f, arrows[f] ?? []])),
    lines: new Map(files.map((f) => [f, 1])),
  };
}

describe('the house: the import graph of lib/ and handlers/ keeps the floors of the design', () => {
  const graph = readImportGraph();

  it('reads every import form: static, type-only, re-export, bare and dynamic', () => {
    const text = [
      "import { a } from './a.ts';",
      "import type {\n  B,\n} from '../b.ts';",
      "export { c } from './c.ts';",
      "import './d.ts';",
      "const e = await import('./e.ts');",
      "// a comment naming 'from' is not an import",
    ].join('\n');
    assert.deepEqual(specifiersOf(text).sort(), ['../b.ts', './a.ts', './c.ts', './d.ts', './e.ts']);
  });

  it('sees the whole house (every file is on a floor, and the arrows are there)', () => {
    assert.ok(graph.files.length > 100, `${graph.files.length} files`);
    assert.ok(graph.files.includes('lib/core/operation.ts') && graph.files.includes('handlers/index.ts'));
    assert.deepEqual(arrowsUp(graph).unplaced, [], 'every file is on a floor');
    assert.ok(
      graph.arrows.get('server.ts')?.includes('handlers/index.ts'),
      'the entry point imports the catalog it hands start-up',
    );
  });

  it('has no import cycle', () => {
    assert.deepEqual(cycles(graph), []);
  });

  it('has no import cycle between folders either: each folder sits on its floors without a folder above importing it back', () => {
    assert.deepEqual(folderCycles(graph), []);
  });

  it('has no file under lib/ importing a handler: the entry point hands start-up the catalog, start-up the faces', () => {
    assert.deepEqual(libImportingHandlers(graph), []);
  });

  it('keeps the two faces apart: the MCP face borrows nothing of the REST face, nor the REST face of it', () => {
    const between = [...graph.arrows].flatMap(([from, targets]) =>
      targets
        .filter(
          (to) =>
            (from.startsWith('lib/mcp/') && to.startsWith('lib/http/')) ||
            (from.startsWith('lib/http/') && to.startsWith('lib/mcp/')),
        )
        .map((to) => `${from} -> ${to}`),
    );
    assert.deepEqual(between, []);
    assert.ok(
      graph.arrows.get('lib/mcp/server.ts')?.includes('lib/admission/front-door.ts'),
      'the admission both faces share is its own module',
    );
  });

  it('has no arrow back up the floors (start-up, faces and handlers, core, services, backends, ...)', () => {
    assert.deepEqual(arrowsUp(graph).up, []);
  });

  it('keeps the core a leaf of the faces: it imports nothing above it', () => {
    const core = FLOORS.findIndex((floor) => floor.name === 'core');
    for (const file of graph.files.filter((f) => f.startsWith('lib/core/')))
      for (const target of graph.arrows.get(file) ?? []) assert.ok(floorOf(target) >= core, `${file} -> ${target}`);
  });

  it('sees folders that import each other where the files make no cycle (a folder spanning two floors)', () => {
    const knot = graphOf({
      'lib/ros/context.ts': ['lib/motion/jog.ts', 'lib/ros/messages.ts'],
      'lib/motion/hold.ts': ['lib/ros/messages.ts'],
      'lib/sim/context.ts': ['lib/ros/context.ts', 'lib/motion/hold.ts'],
    });
    assert.deepEqual(cycles(knot), []);
    assert.deepEqual(folderCycles(knot), [
      {
        folders: ['lib/motion', 'lib/ros'],
        arrows: ['lib/motion/hold.ts -> lib/ros/messages.ts', 'lib/ros/context.ts -> lib/motion/jog.ts'],
      },
    ]);
    assert.deepEqual(folderCycles(graphOf({ 'lib/sim/context.ts': ['lib/ros/context.ts', 'lib/motion/hold.ts'] })), []);
  });

  it('the checks fail on what they look for (a cycle, a file under lib/ importing a handler, an arrow up)', () => {
    const bad = graphOf({
      'lib/core/operation.ts': ['lib/app/services.ts'],
      'lib/app/services.ts': ['lib/core/operation.ts'],
      'lib/mcp/face.ts': ['handlers/robot/pose.ts'],
      'lib/server/start.ts': ['handlers/index.ts'],
      'lib/settings/load.ts': ['lib/http/auth.ts'],
    });
    assert.deepEqual(cycles(bad), [['lib/app/services.ts', 'lib/core/operation.ts']]);
    assert.deepEqual(libImportingHandlers(bad), [
      'lib/mcp/face.ts -> handlers/robot/pose.ts',
      'lib/server/start.ts -> handlers/index.ts',
    ]);
    assert.deepEqual(arrowsUp(bad).up.sort(), [
      'lib/app/services.ts -> lib/core/operation.ts',
      'lib/settings/load.ts -> lib/http/auth.ts',
    ]);
  });
});
