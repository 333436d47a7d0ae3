import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as jointStates from '../../handlers/robot/joint-states.ts';
import * as pose from '../../handlers/robot/pose.ts';
import * as positions from '../../handlers/robot/positions.ts';
import { matFromAbc, matFromQuat } from '../../lib/kinematics/rotation.ts';
import type { RobotContext } from '../../lib/ros/context.ts';
import { err } from '../../lib/result.ts';
import { SteppedClock } from '../../lib/clock.ts';
import { SimContext } from '../../lib/sim/context.ts';
import { dhFlangePose } from '../support/dh.ts';
import { testConfig } from '../support/server.ts';
import { callFor } from '../support/services.ts';
import { steppedUntilSettled } from '../support/stepped.ts';

/** The step of the clock the reads without a joint state wait on (ms). */
const STEP_MS = 10;

const get = (path: string) => new Request(`http://armgate.test${path}`);

describe('robot read handlers against the simulated arm', () => {
  let sim: SimContext;
  before(async () => {
    sim = await SimContext.create(await testConfig());
    await sim.nextJointState(1000);
  });
  after(async () => {
    await sim.close();
  });

  it('GET /robot/joint_states answers the four arrays in J1..J7 order', async () => {
    const res = await jointStates.handler(get('/robot/joint_states'), callFor(sim));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    const body = (await res.json()) as Record<string, number[]>;
    assert.deepEqual(Object.keys(body), ['name', 'position', 'velocity', 'effort']);
    assert.deepEqual(body.name, ['joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6', 'joint7']);
    assert.deepEqual(body.position, [0, 0, 0, -1.57, 0, 1.57, 0]);
    assert.equal(body.velocity?.length, 7);
    assert.equal(body.effort?.length, 7);
  });

  it('GET /robot/pose equals DH forward kinematics of the current joints, with consistent ABC and quaternion', async () => {
    const res = await pose.handler(get('/robot/pose'), callFor(sim));
    assert.equal(res.status, 200);
    const body = (await res.json()) as {
      frame_id: string;
      position: { x: number; y: number; z: number };
      orientation: {
        quaternion: { x: number; y: number; z: number; w: number };
        euler_rad: { a: number; b: number; c: number };
        euler_deg: { a: number; b: number; c: number };
      };
    };
    assert.equal(body.frame_id, 'base_link');
    const dh = dhFlangePose([0, 0, 0, -1.57, 0, 1.57, 0]);
    assert.ok(Math.abs(body.position.x - (dh.position[0] ?? 0)) < 1e-9);
    assert.ok(Math.abs(body.position.y - (dh.position[1] ?? 0)) < 1e-9);
    assert.ok(Math.abs(body.position.z - (dh.position[2] ?? 0)) < 1e-9);
    const fromQuat = matFromQuat(new Float64Array(9), body.orientation.quaternion);
    const { a, b, c } = body.orientation.euler_rad;
    const fromAbc = matFromAbc(new Float64Array(9), a, b, c);
    for (let i = 0; i < 9; i++) {
      assert.ok(Math.abs((fromQuat[i] ?? 0) - (dh.rotation[i] ?? 0)) < 1e-9, `quaternion element ${i}`);
      assert.ok(Math.abs((fromAbc[i] ?? 0) - (dh.rotation[i] ?? 0)) < 1e-9, `ABC element ${i}`);
    }
    const deg = body.orientation.euler_deg;
    assert.ok(
      Math.abs(deg.a - (a * 180) / Math.PI) < 1e-9 &&
        Math.abs(deg.b - (b * 180) / Math.PI) < 1e-9 &&
        Math.abs(deg.c - (c * 180) / Math.PI) < 1e-9,
    );
  });

  it('GET /robot/positions lists home, work and transport with group and joints', async () => {
    const res = await positions.handler(get('/robot/positions'), callFor(sim));
    assert.equal(res.status, 200);
    const body = (await res.json()) as {
      name: string;
      description: string;
      group: string;
      joints: Record<string, number>;
    }[];
    assert.deepEqual(
      body.map((p) => p.name),
      ['home', 'work', 'transport'],
    );
    for (const p of body) {
      assert.equal(p.group, 'iiwa_arm');
      assert.deepEqual(Object.keys(p.joints), ['joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6', 'joint7']);
      assert.ok(p.description.length > 10);
    }
    assert.deepEqual(Object.values(body[1]?.joints ?? {}), [0, 0, 0, -1.57, 0, 1.57, 0]);
  });
});

describe('robot read handlers when the stack is unavailable', () => {
  it('GET /robot/joint_states and /robot/pose answer 503 after 2 s without a joint state', async () => {
    // On a clock the test steps (the wait is the simulator's clock's): 2 s of it, whatever the machine's load (a
    // wall-clock bound of 1.9-3.5 s failed at 4.7 s on a loaded machine).
    const clock = new SteppedClock(0, Date.now());
    const sim = await SimContext.create(await testConfig({ sim: { publish_joint_states: false } }), clock);
    try {
      const started = clock.nowMs();
      const [states, tcp] = await steppedUntilSettled(
        clock,
        Promise.all([
          jointStates.handler(get('/robot/joint_states'), callFor(sim)),
          pose.handler(get('/robot/pose'), callFor(sim)),
        ]),
        'the reads without a joint state',
        10_000,
        STEP_MS,
      );
      const waited = clock.nowMs() - started;
      assert.equal(states.status, 503);
      assert.equal(tcp.status, 503);
      const detail = ((await states.json()) as { detail: string }).detail;
      assert.match(detail, /\/joint_states/);
      assert.ok(waited >= 2000 && waited <= 2000 + STEP_MS, `waited ${waited} ms of the clock`);
    } finally {
      await sim.close();
    }
  });

  it('GET /robot/pose answers 503 naming the FK service when it does not answer', async () => {
    const sim = await SimContext.create(await testConfig());
    // A context whose FK service is down: the simulator with its FK call replaced by the failure a real stack reports.
    const noFk: RobotContext = Object.create(sim, {
      computeFk: {
        value: async () =>
          err({ kind: 'unavailable', iface: '/compute_fk', message: 'service /compute_fk did not answer within 2 s' }),
      },
    });
    try {
      await sim.nextJointState(1000);
      const res = await pose.handler(get('/robot/pose'), callFor(noFk));
      assert.equal(res.status, 503);
      assert.match(((await res.json()) as { detail: string }).detail, /\/compute_fk/);
    } finally {
      await sim.close();
    }
  });
});
