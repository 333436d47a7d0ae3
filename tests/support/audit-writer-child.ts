/**
 * A process that writes an audit trail until it is killed, for the SIGKILL test of the trail
 * (tests/audit/crash.test.ts): `node --import tsx audit-writer-child.ts FILE`. Records one motion, waits until it is on
 * the disk and prints `recorded`; then records, as fast as the writer takes them, effects with inputs of 2 KB by forty
 * tokens (2,000 of them: about 5 MB, so the calls file rotates across 1 MiB several times without rotating the motion
 * out) and
 * calls that changed nothing (refused, of 300 kinds: the refusals' file is written all the time).
 */
import { AuditTrail } from '../../lib/audit/trail.ts';

const file = process.argv[2];
if (!file) throw new Error('usage: audit-writer-child.ts FILE');
const trail = new AuditTrail({ path: file, maxBytes: 1024 * 1024, reads: false });
const operator = { name: 'operator', role: 'operate', face: 'rest' } as const;
const motion = { name: 'move_to_joints', effect: 'motion', idempotent: true, input: {} } as const;
trail.record(
  motion,
  operator,
  performance.now(),
  { joints: [0, 0.4, 0, -1.4, 0, 1.3, 0] },
  { status: 200, success: true },
);
await trail.flush();
process.stdout.write('recorded\n');
const save = { name: 'save_position', effect: 'write', idempotent: true, input: {} } as const;
const note = 'n'.repeat(60);
for (let i = 0; ; i++) {
  if (i < 2000) {
    const fields = Object.fromEntries(Array.from({ length: 24 }, (_, k) => [`field_${k}`, `${i} ${note}`]));
    // Forty tokens: each within its 50 effect lines a second written in full (EFFECT_LINES_MAX).
    const by = { ...operator, name: `operator-${i % 40}` };
    trail.record(save, by, performance.now(), { name: `p${i}`, ...fields }, { status: 200, success: true });
  }
  const refused = { name: `op_${i % 300}`, effect: 'motion', input: {} } as const;
  trail.record(refused, operator, performance.now(), { i }, { status: 422, success: false, message: 'bad input' });
  if (i % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
}
