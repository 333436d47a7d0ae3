// The house's import graph over lib/ and handlers/ (and server.ts): its files, arrows, cycles (between files and between
// folders) and the arrows that run back up the floors of the design (/work/shared/design/architecture.md, "The
// floors"). tests/architecture.test.ts checks it; `npm run house` prints the figures and fails when one of them is not 0.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The floors, top to bottom; a file may import its own floor or any floor below, never one above. The first prefix
 * that matches a file's path (relative to the project, with `/`) gives its floor.
 */
export const FLOORS: readonly { readonly name: string; readonly paths: readonly string[] }[] = [
  { name: 'start-up', paths: ['server.ts', 'lib/server/'] },
  {
    // Side by side: the faces derive routes, tools and the document from the operations they are handed; the handlers
    // and their helpers (motions, dry runs, trajectory requests) define and run them.
    name: 'faces, handlers and their helpers',
    paths: [
      'lib/http/',
      'lib/mcp/',
      // The Foxglove WebSocket face: channels fed from the services and the context, services through the pipeline.
      'lib/foxglove/',
      // Which Host, Origin and CORS front ends are admitted: the app applies it before either face, the MCP endpoint
      // hands its allow-lists to the SDK's transport.
      'lib/admission/',
      // The bounded reader of a request body both faces use.
      'lib/body/',
      'lib/openapi/',
      // The docs' tables (the README's endpoints, docs/mcp.md's tools), derived from the operations and both faces.
      'lib/docs/',
      'lib/ui/',
      'handlers/',
      'lib/ops/',
      'lib/trajectory/',
    ],
  },
  { name: 'core', paths: ['lib/core/'] },
  {
    name: 'services',
    paths: [
      'lib/app/',
      // The wrong-token counts per client address: one limiter in the services, read by every face.
      'lib/auth/',
      'lib/audit/',
      'lib/events/',
      'lib/logs/',
      // Who moves the arm and how it stops: the arbiter, pause and stop, the jog session, the dead-man.
      'lib/control/',
      'lib/plans/',
      // The taught positions' store and its atomic file replacement.
      'lib/positions/',
      'lib/sequences/',
    ],
  },
  { name: 'backends', paths: ['lib/sim/', 'lib/ros/', 'lib/bag/'] },
  {
    // What the backends implement and are configured by: the ROS context interface and its messages, the settings,
    // the safety envelope, the words of a motion. lib/ros holds the interface beside the rclnodejs context (the design
    // card's layout): the files above are the interface's; none of the folders lib/ros imports imports it back.
    name: 'the ROS context interface, settings and safety',
    paths: [
      'lib/ros/context.ts',
      'lib/ros/messages.ts',
      'lib/ros/convert.ts',
      'lib/ros/joint-state.ts',
      'lib/settings/',
      'lib/safety/',
      'lib/ros/hold.ts',
      // The words of a motion and the jog engine: pure, the simulated controller runs it.
      'lib/motion/',
    ],
  },
  {
    name: 'pure math and data',
    paths: [
      'lib/kinematics/',
      'lib/planning/',
      'lib/robot/',
      // Taught positions as data: their names and their YAML file read and written (the settings read it at start-up).
      'lib/positions/taught.ts',
      'lib/net/',
      'lib/trajectory/bounds.ts',
      'lib/describe-issue.ts',
      'lib/result.ts',
      'lib/random.ts',
      // The clock every timer and deadline runs on (the process clock, or a stepped one in tests).
      'lib/clock.ts',
    ],
  },
];

/** The floor index of a file (0: the top), or -1 when no floor names it. */
export function floorOf(file: string): number {
  let best = -1;
  let bestLength = -1;
  FLOORS.forEach((floor, index) => {
    for (const prefix of floor.paths)
      if ((file === prefix || (prefix.endsWith('/') && file.startsWith(prefix))) && prefix.length > bestLength) {
        best = index;
        bestLength = prefix.length;
      }
  });
  return best;
}

export interface ImportGraph {
  /** Every file, relative to the project root. */
  readonly files: readonly string[];
  /** file -> the files it imports (static, type-only, re-exports and dynamic `import()` alike). */
  readonly arrows: ReadonlyMap<string, readonly string[]>;
  /** Lines of each file. */
  readonly lines: ReadonlyMap<string, number>;
}

function listTs(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => `${dir}/${f.split(path.sep).join('/')}`);
}

const STATIC = /^\s*(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"\n]+)['"]/gm;
const BARE = /^\s*import\s*['"]([^'"\n]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"\n]+)['"]\s*\)/g;

/** The module specifiers a file imports: static imports and re-exports (type-only too), bare and dynamic imports. */
export function specifiersOf(text: string): string[] {
  return [STATIC, BARE, DYNAMIC].flatMap((pattern) => [...text.matchAll(pattern)].map((m) => m[1] as string));
}

/** Reads lib/, handlers/ and server.ts and resolves their relative imports. */
export function readImportGraph(): ImportGraph {
  const files = ['server.ts', ...listTs('lib'), ...listTs('handlers')].sort();
  const known = new Set(files);
  const arrows = new Map<string, string[]>();
  const lines = new Map<string, number>();
  for (const file of files) {
    const text = readFileSync(path.join(ROOT, file), 'utf8');
    lines.set(file, text.split('\n').length - (text.endsWith('\n') ? 1 : 0));
    const targets = new Set<string>();
    for (const specifier of specifiersOf(text)) {
      if (!specifier.startsWith('.')) continue;
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier));
      if (known.has(target)) targets.add(target);
    }
    arrows.set(file, [...targets].sort());
  }
  return { files, arrows, lines };
}

/** The strongly connected components of more than one node of a directed graph (or a node with an arrow to itself). */
function stronglyConnected(nodes: readonly string[], arrows: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const target of arrows.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node) as number, low.get(target) as number));
      } else if (onStack.has(target)) low.set(node, Math.min(low.get(node) as number, index.get(target) as number));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || arrows.get(node)?.includes(node)) found.push(component.sort());
    }
  };
  for (const node of nodes) if (!index.has(node)) visit(node);
  return found;
}

/** The import cycles: the strongly connected components of more than one file (or a file importing itself). */
export function cycles(graph: ImportGraph): string[][] {
  return stronglyConnected(graph.files, graph.arrows);
}

/** The folder of a file (`lib/ros` of `lib/ros/context.ts`; `.` of `server.ts`). */
export function folderOf(file: string): string {
  const slash = file.lastIndexOf('/');
  return slash < 0 ? '.' : file.slice(0, slash);
}

/** A set of folders that import each other, and the file arrows between them that make it. */
export interface FolderCycle {
  readonly folders: readonly string[];
  /** `from -> to`, file by file, between two folders of the set. */
  readonly arrows: readonly string[];
}

/**
 * The import cycles between folders: files collapsed to their folder, the strongly connected sets of more than one
 * folder. A folder whose files sit on two floors of the house makes one, even when the files make none.
 */
export function folderCycles(graph: ImportGraph): FolderCycle[] {
  const folders = [...new Set(graph.files.map(folderOf))].sort();
  const between = new Map<string, string[]>();
  for (const [from, targets] of graph.arrows)
    for (const to of targets) {
      const a = folderOf(from);
      const b = folderOf(to);
      if (a === b) continue;
      const list = between.get(a) ?? [];
      if (!list.includes(b)) list.push(b);
      between.set(a, list);
    }
  return stronglyConnected(folders, between).map((set) => {
    const inSet = new Set(set);
    const arrows: string[] = [];
    for (const [from, targets] of graph.arrows)
      for (const to of targets)
        if (folderOf(from) !== folderOf(to) && inSet.has(folderOf(from)) && inSet.has(folderOf(to)))
          arrows.push(`${from} -> ${to}`);
    return { folders: set, arrows: arrows.sort() };
  });
}

/** Arrows from a file to a file on a higher floor (`from -> to`), and files no floor names. */
export function arrowsUp(graph: ImportGraph): { readonly up: string[]; readonly unplaced: string[] } {
  const up: string[] = [];
  const unplaced = graph.files.filter((file) => floorOf(file) < 0);
  for (const [from, targets] of graph.arrows)
    for (const to of targets) if (floorOf(to) >= 0 && floorOf(to) < floorOf(from)) up.push(`${from} -> ${to}`);
  return { up, unplaced };
}

/**
 * Arrows from a file under lib/ to a handler file: the entry point (server.ts) builds the catalog from handlers/ and
 * hands it to start-up (lib/server), which hands it to the faces; nothing under lib/ imports a handler.
 */
export function libImportingHandlers(graph: ImportGraph): string[] {
  const found: string[] = [];
  for (const [from, targets] of graph.arrows)
    if (from.startsWith('lib/'))
      for (const to of targets) if (to.startsWith('handlers/')) found.push(`${from} -> ${to}`);
  return found;
}

/** The figures of the house: files, arrows, arrows back up, cycles and the largest files. */
export function figures(graph: ImportGraph = readImportGraph()) {
  const arrowCount = [...graph.arrows.values()].reduce((sum, targets) => sum + targets.length, 0);
  const found = cycles(graph);
  return {
    files: graph.files.length,
    lines: [...graph.lines.values()].reduce((a, b) => a + b, 0),
    arrows: arrowCount,
    arrowsUp: arrowsUp(graph).up.length,
    libImportingHandlers: libImportingHandlers(graph).length,
    cycles: found.map((c) => c.length),
    folderCycles: folderCycles(graph).map((c) => c.folders.length),
    largest: [...graph.lines]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([file, n]) => `${file} (${n})`),
  };
}

if (
  process.argv[1] &&
  path.resolve(process.argv[1]) === fileURLToPath(import.meta.url) &&
  process.argv.includes('--walk')
) {
  // `npm run house -- --walk 'GET /robot/joint_states'`: the files a request runs through, measured (scripts/walk.ts).
  const { walkMain } = await import('./walk.ts');
  process.exitCode = await walkMain(process.argv.slice(2));
} else if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const graph = readImportGraph();
  console.log(JSON.stringify(figures(graph), null, 2));
  const knots = folderCycles(graph);
  for (const knot of knots) {
    console.log(`folders importing each other (${knot.folders.length}): ${knot.folders.join(' ')}`);
    for (const arrow of knot.arrows) console.log(`  ${arrow}`);
  }
  if (process.argv.includes('--detail')) {
    console.log('cycles:', JSON.stringify(cycles(graph), null, 1));
    console.log('arrows up:', JSON.stringify(arrowsUp(graph), null, 1));
    console.log('lib importing handlers:', libImportingHandlers(graph));
  }
  // All four are 0 (tests/architecture.test.ts): the command fails as soon as one is not, so they stay 0.
  const broken = {
    cycles: cycles(graph).length,
    folderCycles: knots.length,
    arrowsUp: arrowsUp(graph).up.length + arrowsUp(graph).unplaced.length,
    libImportingHandlers: libImportingHandlers(graph).length,
  };
  const named = Object.entries(broken).filter(([, n]) => n > 0);
  if (named.length > 0) {
    console.error(`the house is broken: ${named.map(([what, n]) => `${what} ${n}`).join(', ')} (--detail names them)`);
    process.exitCode = 1;
  }
}
