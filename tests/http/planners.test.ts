import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTestApp } from '../support/server.ts';
import { send, type Target } from '../support/live.ts';

// A pillar between the start on the right of the robot and the target on its left: a straight
// joint-space (ptp) motion runs into it; ompl and chomp must plan around it.
const START = [-1.0, 0.5, 0, -1.2, 0, 1.4, 0];
const TARGET = { x: 0.55, y: 0.45, z: 0.35, a: 0, b: Math.PI, c: 0 };
const SCENE = {
  time_scale: 20,
  initial_position: START,
  obstacles: [{ name: 'pillar', center: [0.45, 0.0, 0.3], size: [0.1, 0.1, 0.6] }],
};

async function movePose(url: Target, body: Record<string, unknown>) {
  const res = await send(url, `/robot/move/pose`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200);
  return (await res.json()) as { success: boolean; message: string };
}

async function tcp(url: Target) {
  return ((await (await send(url, `/robot/pose`)).json()) as { position: { x: number; y: number; z: number } })
    .position;
}

describe('planning around an obstacle on the simulated arm', () => {
  it('refuses a ptp motion through the pillar without moving, naming the collision', async () => {
    const server = await createTestApp({ sim: SCENE });
    try {
      const before = ((await (await server.request(`/robot/joint_states`)).json()) as { position: number[] }).position;
      const result = await movePose(server, { ...TARGET, planner: 'ptp', speed: 1 });
      assert.equal(result.success, false);
      assert.match(result.message, /pillar/);
      assert.match(result.message, /ompl/);
      const after = ((await (await server.request(`/robot/joint_states`)).json()) as { position: number[] }).position;
      assert.deepEqual(after, before);
    } finally {
      await server.close();
    }
  });

  for (const planner of ['ompl', 'chomp']) {
    it(`${planner} reaches the target around the pillar, and reads answer while it plans and moves`, async () => {
      const server = await createTestApp({ sim: SCENE });
      try {
        const log: string[] = [];
        const off = server.context.onControllerLog((line) => log.push(line));
        const motion = movePose(server, { ...TARGET, planner, speed: 1 });
        // Turns of the event loop, no clock: from the moment the move holds the arm, it plans.
        for (let k = 0; k < 100_000 && !server.services.arbiter.activity(); k++)
          await new Promise((resolve) => setImmediate(resolve));
        assert.ok(server.services.arbiter.activity(), 'the move began');
        const read = await server.request(`/robot/joint_states`);
        assert.equal(read.status, 200);
        await read.body?.cancel();
        // Ordered, not timed (a loaded machine stretches both): the planner hands the loop back, so the read is
        // answered before the plan is done and its trajectory reaches the controller.
        assert.ok(
          !log.some((l) => /accepted trajectory/.test(l)),
          `a read during planning is answered before the plan is done:\n${log.join('\n')}`,
        );
        off();
        const result = await motion;
        assert.equal(result.success, true, result.message);
        const p = await tcp(server);
        assert.ok(
          Math.abs(p.x - TARGET.x) < 1e-3 && Math.abs(p.y - TARGET.y) < 1e-3 && Math.abs(p.z - TARGET.z) < 1e-3,
          JSON.stringify(p),
        );
      } finally {
        await server.close();
      }
    });
  }

  it('a plan still being checked when the app closes answers success false, never a 500 (the model is freed)', async () => {
    const server = await createTestApp({ sim: SCENE });
    const motion = send(server, '/robot/move/pose', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...TARGET, planner: 'ompl', speed: 1 }),
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await server.close();
    const res = await motion;
    assert.equal(res.status, 200);
    const result = (await res.json()) as { success: boolean; message: string };
    assert.equal(result.success, false);
    assert.match(result.message, /shutting down/);
  });

  it('answers success false for a target inside the obstacle', async () => {
    const server = await createTestApp({ sim: SCENE });
    try {
      const result = await movePose(server, { x: 0.45, y: 0, z: 0.5, b: Math.PI, planner: 'ompl' });
      assert.equal(result.success, false);
      assert.match(result.message, /in collision/);
    } finally {
      await server.close();
    }
  });
});
