/**
 * npm run bench: armgate's figures beside their comparisons, measured in the same run, one
 * section after another, each printed as plain-text tables. `npm run bench -- http fk` runs only
 * the named sections. To add a section, write a module exporting a `Section` (section.ts) and
 * list it below.
 */
import { cpus, loadavg } from 'node:os';
import { apiSection } from './api.ts';
import { fkSection } from './fk.ts';
import { httpJointStates } from './http-joint-states.ts';
import { ikSection } from './ik.ts';
import { pathQualitySection, plannerSection } from './planning.ts';
import type { Section } from './section.ts';
import { startupSection } from './startup.ts';
import { crowdsSection, stopSection } from './stop.ts';
import { formatTable } from './table.ts';

const SECTIONS: readonly Section[] = [
  startupSection,
  httpJointStates,
  (await import('./memory.ts')).memorySection,
  fkSection,
  ikSection,
  plannerSection,
  pathQualitySection,
  (await import('./cartesian.ts')).cartesianSection,
  apiSection,
  (await import('./mcp.ts')).mcpSection,
  stopSection,
  crowdsSection,
  (await import('./jog.ts')).jogSection,
  (await import('./events.ts')).eventsSection,
  (await import('./foxglove.ts')).foxgloveSection,
  (await import('./attack.ts')).attackSection,
  (await import('./ros2.ts')).ros2Section,
];

const wanted = process.argv.slice(2);
const unknown = wanted.filter((id) => !SECTIONS.some((s) => s.id === id));
if (unknown.length > 0) {
  process.stderr.write(
    `unknown section(s): ${unknown.join(', ')}; sections: ${SECTIONS.map((s) => `${s.id} (${s.description})`).join('; ')}\n`,
  );
  process.exit(2);
}
const selected = wanted.length > 0 ? SECTIONS.filter((s) => wanted.includes(s.id)) : SECTIONS;

const cpuList = cpus();
process.stdout.write(
  `armgate bench: ${cpuList[0]?.model.trim() ?? 'unknown cpu'}, ${cpuList.length} cores, node ${process.version}, load average ${loadavg()[0]?.toFixed(2)}\n` +
    'Figures are medians (across rounds, or over samples where a table says so) unless labelled p95/p99/worst.\n',
);

const started = performance.now();
for (const section of selected) {
  const t0 = performance.now();
  try {
    const tables = await section.run();
    for (const table of tables) process.stdout.write(`\n${formatTable(table)}`);
    process.stdout.write(`  (${section.id}: ${((performance.now() - t0) / 1000).toFixed(1)} s)\n`);
  } catch (e) {
    process.exitCode = 1;
    process.stdout.write(`\n${section.id}: FAILED: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  }
}
process.stdout.write(`\nbench: ${((performance.now() - started) / 1000).toFixed(1)} s\n`);

// Every section closes what it starts, so the process should now end by itself. If something
// still holds it open, say what and end anyway rather than hang (the timer itself holds nothing).
setTimeout(() => {
  process.stderr.write(
    `bench: still running 5 s after the last section; open: ${process.getActiveResourcesInfo().join(', ')}\n`,
  );
  process.exit(1);
}, 5000).unref();
