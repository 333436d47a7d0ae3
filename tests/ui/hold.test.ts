/**
 * The live page's held buttons without a browser (issue 34): the jog dead-man sends the held command at once and
 * then at least every ttl/2, a release sends the zero command and nothing after, a closed link forgets the hold,
 * and a hold-to-run button acts only once held its full time. A stepped clock; no sleeping.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  axisCommand,
  holdToRun,
  type JogCommand,
  jogHold,
  jointCommand,
  restCommand,
  type Timers,
} from '../../lib/ui/static/hold.js';

/** Timers on a clock that moves only when told to. */
function steppedTimers(): Timers & { advance(ms: number): void; pending(): number } {
  let now = 0;
  let next = 1;
  const tasks = new Map<number, { at: number; every: number | undefined; fn: () => void }>();
  const add = (fn: () => void, ms: number, every: number | undefined) => {
    const id = next++;
    tasks.set(id, { at: now + ms, every, fn });
    return id;
  };
  return {
    setInterval: (fn, ms) => add(fn, ms, ms),
    setTimeout: (fn, ms) => add(fn, ms, undefined),
    clearInterval: (id) => void tasks.delete(id as number),
    clearTimeout: (id) => void tasks.delete(id as number),
    pending: () => tasks.size,
    advance(ms) {
      const until = now + ms;
      for (;;) {
        let due: [number, { at: number; every: number | undefined; fn: () => void }] | undefined;
        for (const entry of tasks) if (entry[1].at <= until && (!due || entry[1].at < due[1].at)) due = entry;
        if (!due) break;
        const [id, task] = due;
        now = task.at;
        if (task.every === undefined) tasks.delete(id);
        else task.at += task.every;
        task.fn();
      }
      now = until;
    },
  };
}

/** A link that records what was sent and when (on the stepped clock's terms: the count of advances). */
function recorder() {
  const sent: { at: number; command: JogCommand }[] = [];
  let clock = 0;
  return {
    sent,
    tick(ms: number) {
      clock += ms;
    },
    send: (command: JogCommand) => {
      sent.push({ at: clock, command });
      return true;
    },
  };
}

describe('the jog dead-man (lib/ui/static/hold.js)', () => {
  it('builds one-axis commands: a joint at sign x speed, a Cartesian axis in its frame, zeros to rest', () => {
    assert.deepEqual(jointCommand(2, -1, 0.5, 200), { joints: [0, 0, -0.5, 0, 0, 0, 0], ttl_ms: 200 });
    assert.deepEqual(axisCommand('z', 1, 0.25, 'base', 200), {
      linear: [0, 0, 0.25],
      angular: [0, 0, 0],
      frame: 'base',
      ttl_ms: 200,
    });
    assert.deepEqual(axisCommand('b', -1, 1, 'tool', 150), {
      linear: [0, 0, 0],
      angular: [0, -1, 0],
      frame: 'tool',
      ttl_ms: 150,
    });
    assert.deepEqual(restCommand(200), { joints: [0, 0, 0, 0, 0, 0, 0], ttl_ms: 200 });
    assert.throws(() => axisCommand('w', 1, 1, 'base', 200), /unknown axis w/);
  });

  it('sends the held command at once and again at least every ttl/2 while held, then the zeros once on release', () => {
    const timers = steppedTimers();
    const link = recorder();
    const hold = jogHold({ send: link.send, ttlMs: 200, timers });
    const command = jointCommand(0, 1, 0.5, 200);
    assert.equal(hold.press('J1+', command), true);
    assert.equal(link.sent.length, 1, 'sent at once');
    for (let t = 0; t < 1000; t += 10) {
      timers.advance(10);
      link.tick(10);
    }
    const times = link.sent.map((s) => s.at);
    const gaps = times.slice(1).map((t, i) => t - (times[i] ?? 0));
    assert.ok(gaps.length >= 10, `only ${gaps.length} resends in 1 s`);
    assert.ok(Math.max(...gaps) <= 100, `a gap of ${Math.max(...gaps)} ms (ttl 200: at most 100)`);
    assert.ok(
      link.sent.every((s) => s.command === command),
      'only the held command while held',
    );
    assert.equal(hold.release(), true);
    const last = link.sent.at(-1)?.command;
    assert.deepEqual(last, restCommand(200));
    const count = link.sent.length;
    timers.advance(1000);
    assert.equal(link.sent.length, count, 'nothing after the release');
    assert.equal(timers.pending(), 0);
    assert.equal(hold.release(), false, 'a second release sends nothing');
    assert.equal(link.sent.length, count);
  });

  it("ignores a key's auto-repeat, switches to another button's command, and forgets the hold when the link closes", () => {
    const timers = steppedTimers();
    const link = recorder();
    const hold = jogHold({ send: link.send, ttlMs: 100, timers });
    assert.equal(hold.periodMs, 25);
    const a = jointCommand(3, -1, 1, 100);
    const b = axisCommand('x', 1, 1, 'base', 100);
    hold.press('J4-', a);
    assert.equal(hold.press('J4-', a), false, 'the same key again (auto-repeat) sends nothing more');
    assert.equal(link.sent.length, 1);
    hold.press('x+', b);
    assert.equal(hold.held, 'x+');
    assert.equal(link.sent.at(-1)?.command, b);
    timers.advance(60);
    assert.ok(link.sent.slice(2).every((s) => s.command === b));
    assert.equal(hold.linkClosed(), true);
    const count = link.sent.length;
    timers.advance(500);
    assert.equal(link.sent.length, count, 'nothing sent after the link closed');
    assert.equal(hold.release(), false, 'nothing held any more');
    assert.equal(hold.resend(), false);
  });
});

describe('hold to run (lib/ui/static/hold.js)', () => {
  it('runs only once held its full time; a short press runs nothing and says so', () => {
    const timers = steppedTimers();
    const button = holdToRun({ holdMs: 700, timers });
    let runs = 0;
    button.press(() => runs++);
    timers.advance(650);
    assert.equal(button.release(), 'short');
    timers.advance(1000);
    assert.equal(runs, 0, 'a press shorter than the hold runs nothing');
    button.press(() => runs++);
    button.press(() => runs++);
    timers.advance(700);
    assert.equal(runs, 1, 'held 700 ms: runs once (a second press while held changes nothing)');
    assert.equal(button.release(), 'ran');
    assert.equal(button.release(), 'idle');
    timers.advance(2000);
    assert.equal(runs, 1);
  });
});
