/**
 * MotionControl when the backend cannot pause what moves (ros2: a trajectory with a future stamp, a
 * sequence whose runner was not told): the pause answers the backend's 503 reason, nothing stays
 * paused, and the events that said "pausing" then say that it did not pause.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventBus } from '../../lib/events/bus.ts';
import { LogRing } from '../../lib/logs/ring.ts';
import { MotionArbiter } from '../../lib/control/arbiter.ts';
import { MotionControl } from '../../lib/control/pause.ts';
import type { RobotContext } from '../../lib/ros/context.ts';
import { err, ok } from '../../lib/result.ts';

/** The events a subscriber receives, parsed from their SSE frames. */
function recordEvents(bus: EventBus): { type: string; data: Record<string, unknown> }[] {
  const seen: { type: string; data: Record<string, unknown> }[] = [];
  const decoder = new TextDecoder();
  bus.subscribe(
    {
      send: (frame) => {
        const text = decoder.decode(frame);
        const type = /^event: (.*)$/m.exec(text)?.[1];
        const data = /^data: (.*)$/m.exec(text)?.[1];
        if (type && data) seen.push({ type, data: JSON.parse(data) as Record<string, unknown> });
      },
      end: () => undefined,
    },
    { jointStateHz: 1 },
  );
  return seen;
}

describe('MotionControl: a pause the backend refuses', () => {
  it('answers unavailable with the reason, leaves nothing paused, and says so in the events', async () => {
    const arbiter = new MotionArbiter();
    arbiter.addSource(() => ({ kind: 'sequence', detail: 'a motion sequence is running (pid 1)' }));
    const why = 'pause on the ros2 backend cannot hold this: POST /stop stops it';
    const context = {
      setExecutionRate: async () => err({ kind: 'unavailable', iface: '/x', message: why }),
    } as unknown as RobotContext;
    const bus = new EventBus();
    const seen = recordEvents(bus);
    const told: number[] = [];
    const control = new MotionControl({
      arbiter,
      context: () => context,
      log: new LogRing(10),
      events: bus,
      runners: {
        setRate: async (rate) => {
          told.push(rate);
          return ok(0);
        },
        stop: async () => false,
      },
    });
    const answer = await control.pause();
    assert.equal(answer.ok, false);
    assert.deepEqual(answer.ok ? undefined : answer.error, { kind: 'unavailable', detail: why });
    assert.equal(control.state(), undefined, 'nothing is paused');
    assert.deepEqual(told, [0, 1], 'the runners were told to pause, then to run at the override again');
    const kinds = seen.filter((e) => e.type !== 'motion').map((e) => `${e.type}:${e.data.state ?? e.data.ended}`);
    assert.deepEqual(kinds, ['pause:pausing', `resume:not paused: ${why}`]);
    const resumed = await control.resume();
    assert.equal(resumed.ok, false, 'nothing to resume');
    bus.close();
  });
});
