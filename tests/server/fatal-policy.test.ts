/**
 * The way out after a fault (lib/server/fatal.ts) over stand-in parts: each step given up at its deadline, whatever
 * the stop and the close do (hang, throw), the secrets never written, one exit. tests/server/fatal.test.ts has the
 * real server; tests/ros2/faults.test.ts the real graph.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeFault, FATAL_EXIT_CODE, type FatalParts, fatalPolicy } from '../../lib/server/fatal.ts';

/** Parts recording what the policy does; `stop` and `close` as given. */
function parts(over: Partial<Pick<FatalParts, 'stop' | 'close'>> = {}) {
  const lines: Record<string, string | number>[] = [];
  const calls: string[] = [];
  let exited: (code: number) => void = () => undefined;
  const exit = new Promise<number>((resolve) => {
    exited = resolve;
  });
  const fake: FatalParts = {
    stop: over.stop ?? (async () => calls.push('stop')),
    close: over.close ?? (async () => calls.push('close')),
    secrets: ['s3cret-token-value'],
    log: (fields) => lines.push(fields),
    flush: () => calls.push('flush'),
    exit: (code) => {
      calls.push(`exit ${code}`);
      exited(code);
    },
    stopDeadlineMs: 50,
    closeDeadlineMs: 50,
  };
  return { fake, lines, calls, exit };
}

describe('the way out after a fault', () => {
  it('stops, closes, flushes and exits 70, in that order, with the fatal line first', async () => {
    const p = parts();
    const policy = fatalPolicy(p.fake);
    assert.equal(policy.faulted, false);
    policy.fault('uncaught exception', new Error('boom'));
    assert.equal(policy.faulted, true);
    assert.equal(await p.exit, FATAL_EXIT_CODE);
    assert.deepEqual(p.calls, ['stop', 'close', 'flush', `exit ${FATAL_EXIT_CODE}`]);
    assert.equal(p.lines[0]?.level, 'fatal');
    assert.match(String(p.lines[0]?.stack), /^Error: boom\n {4}at /);
    assert.deepEqual(p.lines[1], {
      level: 'info',
      msg: 'exiting after a fault',
      stop: 'done',
      close: 'done',
      code: 70,
    });
  });

  it('gives up a stop that never answers and a close that never ends at their deadlines, and still exits', async () => {
    const p = parts({ stop: () => new Promise(() => undefined), close: () => new Promise(() => undefined) });
    fatalPolicy(p.fake).fault('unhandled rejection', new Error('hung'));
    assert.equal(await p.exit, FATAL_EXIT_CODE);
    assert.deepEqual(
      { level: p.lines[1]?.level, stop: p.lines[1]?.stop, close: p.lines[1]?.close },
      { level: 'warn', stop: 'not done within 50 ms', close: 'not done within 50 ms' },
    );
  });

  it('goes on to the close and the exit when the stop throws, at once or later', async () => {
    const p = parts({
      stop: () => {
        throw new Error('no context');
      },
      close: async () => {
        throw new Error('close failed');
      },
    });
    fatalPolicy(p.fake).fault('uncaught exception', new Error('first'));
    assert.equal(await p.exit, FATAL_EXIT_CODE);
    assert.deepEqual([p.lines[1]?.stop, p.lines[1]?.close], ['failed: no context', 'failed: close failed']);
  });

  it('exits at once on a second fault, without waiting for the first way out', async () => {
    const p = parts({ stop: () => new Promise(() => undefined) });
    const policy = fatalPolicy({ ...p.fake, stopDeadlineMs: 60_000 });
    policy.fault('uncaught exception', new Error('first'));
    policy.fault('unhandled rejection', 'second');
    assert.equal(await p.exit, FATAL_EXIT_CODE);
    assert.deepEqual(
      p.lines.map((line) => line.msg),
      [
        'uncaught exception: stopping the arm and exiting',
        'unhandled rejection while exiting after a fault: exiting at once',
      ],
    );
    assert.equal(p.lines[1]?.stack, "'second'");
  });

  it('never writes a secret, and describes what is not an Error', () => {
    assert.equal(
      describeFault(new Error('bad header s3cret-token-value'), ['s3cret-token-value', '']).split('\n')[0],
      'Error: bad header [redacted]',
    );
    assert.equal(describeFault({ code: 7, token: 'abc' }, ['abc']), "{ code: 7, token: '[redacted]' }");
    assert.equal(describeFault(undefined, []), 'undefined');
    assert.ok(describeFault(new Error('x'.repeat(20_000)), []).length <= 8003);
  });
});
