// `npm run test:tier [-- --check | --write]`: the unit suite's real-time tier, measured from the test files' code. A
// unit-suite file (tests/**/*.test.ts but tests/ros2/) is in the tier when its code, comments aside, waits on a timer
// of the machine (a `sleep` or `delay` made of setTimeout, or imported from tests/support/live.ts or rcl-checks.ts, a
// promise that setTimeout resolves, node:timers/promises' setTimeout) or reads the machine's clock (performance.now(),
// Date.now()), not counting a stepped clock's epoch (`new SteppedClock(0, Date.now())`) nor a planner's compute clock
// (`nowMs: () => performance.now()`). A file on a stepped clock whose `sleep` is `clock.advance` is not in it.
// Prints the table docs/development.md holds (why each file needs the machine's time, from REASONS below, and the
// counts); --check exits 1 when the docs' table differs or a file of the tier has no reason, --write writes it there.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Why a file needs the machine's time: one of these. */
const WHY = {
  sockets: "a real socket: its bytes, caps, windows, slow bodies or disconnect, in the machine's time",
  durations:
    "a rate, window or duration counted in the machine's time (the audit under a flood, an audit line's duration)",
  processes:
    'a process of its own (a sequence runner, the command line, a compiled start, a killed writer, a fatal exit)',
  threads: "worker threads, compute budgets and the event loop (a check's timeout, IK's budget, the loop's stalls)",
  ros2: 'the ros2 backend over the rclnodejs stand-in, whose context runs on the process clock',
  unmoved:
    "logic on the process clock, not moved yet: a motion, or that nothing moved, waited for in the machine's time",
  standstill:
    "a stepped clock held still while the machine's time passes: what runs on the clock does not happen meanwhile",
  polls: "only polls in the machine's time for a socket's or a process's answer, with a generous bound",
};

/** The tier's files and why (see WHY). A file the scan finds and this does not name fails --check. */
const REASONS = {
  'tests/attack/audit-repeat-confirmed.test.ts': 'unmoved',
  'tests/attack/audit-repeat-motions.test.ts': 'unmoved',
  'tests/attack/duplicate-authorization.test.ts': 'unmoved',
  'tests/attack/foxglove-closing.test.ts': 'sockets',
  'tests/attack/foxglove-stop-request.test.ts': 'polls',
  'tests/attack/jog-socket-audit.test.ts': 'sockets',
  'tests/attack/jog-socket-close.test.ts': 'sockets',
  'tests/attack/jog-socket-shutdown.test.ts': 'sockets',
  'tests/attack/jog-socket-unread.test.ts': 'sockets',
  'tests/attack/mcp-refused-stops.test.ts': 'unmoved',
  'tests/attack/mcp-stop-arguments.test.ts': 'polls',
  'tests/audit/authenticated-flood.test.ts': 'unmoved',
  'tests/audit/crash.test.ts': 'processes',
  'tests/audit/flood.test.ts': 'durations',
  'tests/audit/trail.test.ts': 'durations',
  'tests/bag/flush.test.ts': 'processes',
  'tests/cli.test.ts': 'processes',
  'tests/compat/original.test.ts': 'processes',
  'tests/core/numbers-as-strings.test.ts': 'polls',
  'tests/events/room-at-cap.test.ts': 'sockets',
  'tests/events/room-at-connection-cap.test.ts': 'sockets',
  'tests/events/stalled-streams.test.ts': 'sockets',
  'tests/events/stream.test.ts': 'sockets',
  'tests/foxglove/large-messages.test.ts': 'polls',
  'tests/foxglove/server.test.ts': 'sockets',
  'tests/foxglove/settings.test.ts': 'polls',
  'tests/http/arbiter.test.ts': 'processes',
  'tests/http/guessing.test.ts': 'sockets',
  'tests/http/ik-wait.test.ts': 'threads',
  'tests/http/planners.test.ts': 'threads',
  'tests/http/safety.test.ts': 'processes',
  'tests/http/sequences.test.ts': 'processes',
  'tests/http/stop.test.ts': 'processes',
  'tests/mcp/confirm.test.ts': 'unmoved',
  'tests/mcp/schemas.test.ts': 'polls',
  'tests/mcp/tools.test.ts': 'polls',
  'tests/mcp/transport.test.ts': 'sockets',
  'tests/net/message-budget.test.ts': 'polls',
  'tests/openapi/examples.test.ts': 'processes',
  'tests/ros/rcl-context.faults.test.ts': 'ros2',
  'tests/ros/rcl-context.test.ts': 'ros2',
  'tests/ros/rcl-hold.test.ts': 'ros2',
  'tests/ros/rcl-ik-wait.test.ts': 'ros2',
  'tests/ros/rcl-jog.test.ts': 'sockets',
  'tests/ros/rcl-motion-deadline.test.ts': 'standstill',
  'tests/ros/rcl-safety.test.ts': 'ros2',
  'tests/ros/rcl-servo.test.ts': 'ros2',
  'tests/ros/sequence-pause.test.ts': 'ros2',
  'tests/ros/sequence-runner.test.ts': 'ros2',
  'tests/ros/stack.test.ts': 'ros2',
  'tests/sequences/bag-race.test.ts': 'processes',
  'tests/sequences/bag-topics.test.ts': 'processes',
  'tests/sequences/faults.test.ts': 'processes',
  'tests/server/attack.test.ts': 'sockets',
  'tests/server/caps-mcp-stop.test.ts': 'sockets',
  'tests/server/client-abort.test.ts': 'sockets',
  'tests/server/connection-crowds.test.ts': 'sockets',
  'tests/server/fatal.test.ts': 'processes',
  'tests/server/jog-socket.test.ts': 'sockets',
  'tests/server/keep-alive.test.ts': 'sockets',
  'tests/server/lingering-close.test.ts': 'sockets',
  'tests/server/log-line.test.ts': 'processes',
  'tests/server/request-forms.test.ts': 'sockets',
  'tests/server/request-log-file.test.ts': 'processes',
  'tests/server/slow-bodies-turns.test.ts': 'sockets',
  'tests/server/slow-clients.test.ts': 'sockets',
  'tests/server/stop-spellings.test.ts': 'polls',
  'tests/server/stops-behind-refusals.test.ts': 'sockets',
  'tests/server/upgrade-offers.test.ts': 'sockets',
  'tests/server/uploads-checked.test.ts': 'sockets',
  'tests/server/uploads-memory.test.ts': 'sockets',
  'tests/server/uploads-stopped.test.ts': 'sockets',
  'tests/sim/controller.test.ts': 'threads',
  'tests/sim/ik-request.test.ts': 'threads',
  'tests/start-compiled.test.ts': 'processes',
  'tests/texts.test.ts': 'polls',
  'tests/trajectory/limits-live.test.ts': 'threads',
};

/** The unit suite's files (as scripts/compile-tests.mjs's testFiles lists them). */
export function unitFiles() {
  return readdirSync(path.join(root, 'tests'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts') && !f.startsWith(`ros2${path.sep}`))
    .map((f) => path.join('tests', f).split(path.sep).join('/'))
    .sort();
}

/** A file's code without its comments (near enough: block comments, whole-line and trailing `// ` ones). */
const codeOf = (text) =>
  text
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '')
    .replace(/([;,{)]\s*)\/\/ .*$/gm, '$1');

/** What of the machine's time a file's code uses: its waits on a timer and its reads of the clock. */
export function scan(code) {
  const waiters = new Set();
  // Local helpers made of a timer: `const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))`.
  for (const m of code.matchAll(/const (\w+) = \([^)]*\)[^\n]*=>[^\n]*setTimeout\(/g)) waiters.add(m[1]);
  // tests/support/live.ts's (and rcl-checks.ts's) sleep, and its polls in the machine's time (waitFor, atRest).
  for (const m of code.matchAll(/import \{([^}]*)\} from '\.\.?\/(?:\.\.\/)*support\/(?:live|rcl-checks)\.ts'/g))
    for (const name of ['sleep', 'waitFor', 'atRest'])
      if (new RegExp(`(?<![\\w.])${name}(?!\\w)(?! as)`).test(m[1] ?? '')) waiters.add(name);
  if (/setTimeout as (\w+)[^\n]*node:timers\/promises/.test(code))
    waiters.add(/setTimeout as (\w+)/.exec(code)?.[1] ?? 'sleep');
  let waits = 0;
  for (const name of waiters) waits += code.match(new RegExp(`(?<![.\\w])${name}\\(`, 'g'))?.length ?? 0;
  // Timers of the machine written inline (a promise one resolves, a guard, a ticker), but those making a helper above.
  waits += code.match(/\bset(?:Timeout|Interval)\(/g)?.length ?? 0;
  waits -= code.match(/const \w+ = \([^)]*\)[^\n]*=>[^\n]*setTimeout\(/g)?.length ?? 0;
  const reads =
    (code.match(/performance\.now\(\)|Date\.now\(\)/g)?.length ?? 0) -
    (code.match(/new SteppedClock\([^)]*Date\.now\(\)\)|nowMs: \(\) => performance\.now\(\)/g)?.length ?? 0);
  return { waits, reads };
}

/** The tier: each file that waits on the machine's time or reads its clock, with its counts and reason. */
export function tier() {
  const files = unitFiles();
  const rows = [];
  for (const file of files) {
    const { waits, reads } = scan(codeOf(readFileSync(path.join(root, file), 'utf8')));
    if (waits > 0 || reads > 0) rows.push({ file, waits, reads, why: REASONS[file] });
  }
  return { files: files.length, rows };
}

/** The markdown docs/development.md holds between its markers. */
export function table({ files, rows }) {
  const lines = [
    `${rows.length} of the unit suite's ${files} files (${Math.round((rows.length / files) * 100)} %) wait on the machine's time or read its clock (\`npm run test:tier\`, ${new Date().toISOString().slice(0, 10)}):`,
    '',
    '| Why | Files | Waits | Clock reads | The files |',
    '| --- | ---: | ---: | ---: | --- |',
  ];
  for (const [why, text] of Object.entries(WHY)) {
    const of = rows.filter((r) => r.why === why);
    if (of.length === 0) continue;
    const names = of.map((r) => `\`${r.file.replace(/^tests\//, '')}\``).join(', ');
    const sum = (key) => of.reduce((n, r) => n + r[key], 0);
    lines.push(`| ${text} | ${of.length} | ${sum('waits')} | ${sum('reads')} | ${names} |`);
  }
  return lines.join('\n');
}

const START = '<!-- real-time-tier: generated by `npm run test:tier -- --write` -->';
const END = '<!-- /real-time-tier -->';

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const measured = tier();
  const unnamed = measured.rows.filter((r) => !r.why);
  const gone = Object.keys(REASONS).filter((f) => !measured.rows.some((r) => r.file === f));
  const text = table(measured);
  const docsPath = path.join(root, 'docs', 'development.md');
  const docs = readFileSync(docsPath, 'utf8');
  const from = docs.indexOf(START);
  const to = docs.indexOf(END);
  const current = from >= 0 && to > from ? docs.slice(from + START.length + 1, to - 1) : undefined;
  // The date line is the day it was measured: a check compares the rest.
  const undated = (t) => t?.replace(/, \d{4}-\d\d-\d\d\):/, '):');
  if (process.argv.includes('--write') && from >= 0 && to > from)
    writeFileSync(docsPath, `${docs.slice(0, from + START.length)}\n${text}\n${docs.slice(to)}`);
  else process.stdout.write(`${text}\n`);
  for (const r of unnamed)
    process.stderr.write(`${r.file}: in the tier (${r.waits} waits, ${r.reads} reads) without a reason in REASONS\n`);
  for (const f of gone) process.stderr.write(`${f}: named in REASONS but no longer waits on the machine's time\n`);
  if (process.argv.includes('--check')) {
    const stale = undated(current) !== undated(text);
    if (stale)
      process.stderr.write('docs/development.md: the real-time tier differs: run `npm run test:tier -- --write`\n');
    if (stale || unnamed.length > 0 || gone.length > 0) process.exit(1);
  }
}
