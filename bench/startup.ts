import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Section } from './section.ts';
import { ros2Env } from './ros2.ts';
import { median } from './stats.ts';
import { type Table, verdict } from './table.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ROUNDS = 5;
const IDLE_S = 3;
const TARGET_START_MS = 1000;
const TARGET_RSS_MB = 150;
const LISTENING = /^listening on (http:\S+)$/m;

/** A server of the bare runtime, for the floor: what node itself takes to start and listen. */
const BARE_JS =
  "require('node:http').createServer((q, s) => s.end('x')).listen(0, '127.0.0.1', function () { console.log('listening on http://127.0.0.1:' + this.address().port); });";

interface Command {
  readonly label: string;
  readonly argv: readonly string[];
  /** The process whose memory is the server's (npm stays as a parent of the server process). */
  readonly serverMatch?: RegExp;
  /** Its environment (default: this process's). */
  readonly env?: NodeJS.ProcessEnv;
}

const COMMANDS: readonly Command[] = [
  { label: 'bare node:http server (node -e)', argv: [process.execPath, '-e', BARE_JS] },
  {
    label: 'the same server as TypeScript under tsx',
    argv: [process.execPath, '--import', 'tsx', 'bench/startup-bare.ts'],
  },
  {
    label: 'npm start (npm, then the compiled server)',
    argv: ['npm', 'start', '--silent', '--', '--port', '0'],
    serverMatch: /^\S*node scripts\/start\.mjs/,
  },
  {
    label: 'node scripts/start.mjs (what npm start runs)',
    argv: [process.execPath, 'scripts/start.mjs', '--port', '0'],
  },
  {
    label: 'node --import tsx server.ts (before: tsx)',
    argv: [process.execPath, '--import', 'tsx', 'server.ts', '--port', '0'],
  },
];

interface StartRun {
  readonly ms: number;
  readonly rssMb: number;
}

/** Resident memory of `pid` in MB, from /proc (Linux). */
function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/^VmRSS:\s+(\d+)\s+kB$/m.exec(status)?.[1]);
  return kb / 1024;
}

/** The process in `root`'s tree whose command line matches `match` (the server under npm). */
function findInTree(root: number, match: RegExp): number | undefined {
  const children = (pid: number): number[] => {
    try {
      return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      return [];
    }
  };
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    try {
      if (match.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' '))) return pid;
    } catch {}
    queue.push(...children(pid));
  }
  return undefined;
}

/** Starts `command`, times spawn to its "listening on" line, waits IDLE_S, reads the server's RSS, ends the group. */
async function startOnce(command: Command): Promise<StartRun> {
  const [file, ...args] = command.argv;
  const started = performance.now();
  const child: ChildProcess = spawn(file as string, args, {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    env: { ...(command.env ?? process.env), ARMGATE_TOKEN: '' },
  });
  let out = '';
  let err = '';
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  try {
    const ms = await new Promise<number>((resolve, reject) => {
      child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
        if (LISTENING.test(out)) resolve(performance.now() - started);
      });
      child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
        err += chunk;
      });
      child.once('close', (code) => reject(new Error(`${command.label}: exited (${code}) before listening: ${err}`)));
      setTimeout(() => reject(new Error(`${command.label}: no listening line in 60 s`)), 60_000).unref();
    });
    await new Promise((resolve) => setTimeout(resolve, IDLE_S * 1000));
    const pid = command.serverMatch ? findInTree(child.pid as number, command.serverMatch) : child.pid;
    if (pid === undefined) throw new Error(`${command.label}: the server process was not found`);
    return { ms, rssMb: rssMb(pid) };
  } finally {
    try {
      process.kill(-(child.pid as number), 'SIGTERM');
    } catch {}
    await exited;
  }
}

/** RSS after loading one package (or none) in a fresh node, MB; median of 3. */
async function packageRss(code: string): Promise<number> {
  const runs: number[] = [];
  for (let i = 0; i < 3; i++) {
    const text = await new Promise<string>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `${code}\nawait new Promise((r) => setTimeout(r, 1000));\nprocess.stdout.write(String(process.memoryUsage().rss));`,
        ],
        { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => {
        out += c;
      });
      child.once('close', (c) => (c === 0 ? resolve(out) : reject(new Error(`exit ${c}: ${code}`))));
    });
    runs.push(Number(text) / 2 ** 20);
  }
  return median(runs);
}

const require = createRequire(import.meta.url);
const fileMb = (...parts: string[]) => statSync(path.join(...parts)).size / 2 ** 20;

const MUJOCO_AS_IS = "const m = await import('mujoco-js'); await m.default();";

/** What the idle server's memory is made of: each part measured alone in a fresh node, largest first. */
async function memoryTable(serverRssMb: number): Promise<Table> {
  const base = await packageRss('');
  // npm start loads mujoco-js's binary from a file written out of the package at build (scripts/start.mjs).
  const manifest = JSON.parse(readFileSync(path.join(ROOT, '.build', 'manifest.json'), 'utf8'));
  const split = (manifest.derived as string[] | undefined)?.find((f) => f.endsWith('.mjs'));
  const mujocoAsIs = (await packageRss(MUJOCO_AS_IS)) - base;
  const parts: [string, string][] = [
    split
      ? [
          "MuJoCo's WebAssembly module as npm start loads it (binary from .build/, instantiated)",
          `const m = await import(${JSON.stringify(pathToFileURL(path.join(ROOT, '.build', split)).href)}); await m.default();`,
        ]
      : ["MuJoCo's WebAssembly module (mujoco-js as it is, instantiated)", MUJOCO_AS_IS],
    [
      'the MCP SDK (server, Streamable HTTP transport, zod)',
      "await import('@modelcontextprotocol/sdk/server/mcp.js'); await import('@modelcontextprotocol/sdk/server/streamableHttp.js');",
    ],
    ['Valibot and its JSON Schema converter', "await import('valibot'); await import('@valibot/to-json-schema');"],
    ['@whatwg-node/server and itty-router', "await import('@whatwg-node/server'); await import('itty-router');"],
    ['yaml and fast-xml-parser', "await import('yaml'); await import('fast-xml-parser');"],
  ];
  const rows: [string, number][] = [];
  let packages = 0;
  for (const [label, code] of parts) {
    const mb = (await packageRss(code)) - base;
    packages += mb;
    rows.push([label, mb]);
  }
  const swaggerDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
  const redocDir = path.dirname(require.resolve('redoc/package.json'));
  const assets =
    fileMb(swaggerDir, 'swagger-ui-bundle.js') +
    fileMb(swaggerDir, 'swagger-ui.css') +
    fileMb(redocDir, 'bundles', 'redoc.standalone.js');
  rows.push([
    "armgate's own code and state (schemas, OpenAPI document, model, live-page assets, the rest)",
    serverRssMb - base - packages,
  ]);
  rows.push(['node itself (an empty process)', base]);
  rows.sort((a, b) => b[1] - a[1]);
  return {
    title: `What the idle server's ${serverRssMb.toFixed(0)} MB RSS holds (each part loaded alone in a fresh node, MB over an empty one)`,
    header: ['part', 'MB'],
    rows,
    notes: [
      `mujoco-js imported as it is (its binary a base64 string in its JavaScript): ${mujocoAsIs.toFixed(0)} MB.`,
      `Not in the idle server: the swagger-ui and redoc assets (${assets.toFixed(1)} MB of files), read on the first request for /docs or /redoc.`,
      'Parts measured alone overlap a little (shared node internals); "own code and state" is the remainder of the',
      'npm start row above, so it also absorbs that overlap and allocator slack.',
    ],
  };
}

/**
 * Start-up: spawn to the "listening on" line and RSS 3 s later, ROUNDS rounds of every command
 * in turn (neighbouring runs, so drift of the machine falls on all alike), medians. Then what
 * that memory is made of.
 */
export const startupSection: Section = {
  id: 'startup',
  description: 'npm start to listening and idle RSS, beside bare node and tsx; what the memory holds',
  async run() {
    // The first start after a change compiles; this section measures the starts after it.
    await startOnce(COMMANDS[3] as Command);
    // backend: ros2 with the stack absent (ROS 2 sourced, rclnodejs built, no node of the stack running).
    const ros2 = ros2Env();
    const ros2Command: Command | undefined =
      'env' in ros2
        ? {
            label: 'node scripts/start.mjs --backend ros2, the stack absent',
            argv: [process.execPath, 'scripts/start.mjs', '--backend', 'ros2', '--port', '0'],
            env: ros2.env,
          }
        : undefined;
    const commands = ros2Command ? [...COMMANDS, ros2Command] : COMMANDS;
    const runs = new Map<Command, StartRun[]>(commands.map((c) => [c, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const command of commands) runs.get(command)?.push(await startOnce(command));
    }
    const rows: (readonly (string | number)[])[] = commands.map((command) => {
      const r = runs.get(command) ?? [];
      return [command.label, median(r.map((x) => x.ms)), median(r.map((x) => x.rssMb))] as const;
    });
    if (!ros2Command)
      rows.push([`--backend ros2, the stack absent: not measured (${'missing' in ros2 ? ros2.missing : ''})`, '', '']);
    const npmRow = rows[2] as readonly [string, number, number];
    const ros2Row = ros2Command ? (rows[commands.length - 1] as readonly [string, number, number]) : undefined;
    const table: Table = {
      title: `Start-up on the simulated arm: spawn to "listening on", RSS ${IDLE_S} s after (medians of ${ROUNDS})`,
      header: ['command', 'ms to listening', `RSS after ${IDLE_S} s idle, MB`],
      rows,
      notes: [
        `target npm start < ${TARGET_START_MS} ms: ${verdict(npmRow[1] < TARGET_START_MS)} (${npmRow[1].toFixed(0)} ms, of which npm itself takes the difference to the row below)`,
        `target idle RSS < ${TARGET_RSS_MB} MB (the server process): ${verdict(npmRow[2] < TARGET_RSS_MB)} (${npmRow[2].toFixed(0)} MB)`,
        ...(ros2Row
          ? [
              `target --backend ros2 with the stack absent < ${TARGET_START_MS} ms to listening: ${verdict(ros2Row[1] < TARGET_START_MS)} (${ros2Row[1].toFixed(0)} ms)`,
            ]
          : []),
      ],
    };
    return [table, await memoryTable(npmRow[2])];
  },
};
