/**
 * The test robot stack's logic without ROS (tests/ros/stack: the arm, the controller, move_group's
 * answers), so that `npm test` checks it everywhere; tests/ros/stack.test.ts checks the same stack
 * over a real ROS 2 graph.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { Arm } from './stack/arm.ts';
import {
  type ControllerGoal,
  type GoalEnd,
  segmentTolerances,
  TrajectoryController,
  type TrajectoryMsg,
  validateTrajectory,
} from './stack/jtc.ts';
import { at, linkPose, loadModel } from './stack/model.ts';
import { MoveGroup } from './stack/moveit.ts';
import { FILES } from './stack/stack.ts';

const model = loadModel(readFileSync(FILES.urdf, 'utf8'), readFileSync(FILES.limits, 'utf8'));
const srdf = readFileSync(FILES.srdf, 'utf8');
const JOINTS = model.jointNames;
const START = [0, 0.3, 0, -1.2, 0, 0.9, 0];
const zero = { sec: 0, nanosec: 0 };
const msg = (
  names: readonly string[],
  points: { positions: number[]; t: number; velocities?: number[] }[],
): TrajectoryMsg => ({
  header: { stamp: zero },
  joint_names: names,
  points: points.map((p) => ({
    positions: p.positions,
    velocities: p.velocities ?? [],
    accelerations: [],
    effort: [],
    time_from_start: { sec: Math.floor(p.t), nanosec: Math.round((p.t % 1) * 1e9) },
  })),
});
const defaults = () => segmentTolerances(JOINTS, [], [], zero);

function goal(tolerances = defaults()): ControllerGoal & { ended: GoalEnd | undefined } {
  const g = {
    ended: undefined as GoalEnd | undefined,
    tolerances,
    feedback: () => undefined,
    finish: (e: GoalEnd) => {
      g.ended = e;
    },
  };
  return g;
}

/** Runs the controller at 100 Hz from t until `until` holds or `seconds` pass; returns the time. */
function run(controller: TrajectoryController, t: number, seconds: number, until: () => boolean = () => false): number {
  let now = t;
  for (let k = 0; k < seconds * 100 && !until(); k++) {
    now += 0.01;
    controller.update(now, 0.01);
  }
  return now;
}

describe('the test stack without ROS', () => {
  test("refuses trajectories with the controller's own reasons", () => {
    const q = START;
    assert.match(
      validateTrajectory(msg(JOINTS.slice(0, 6), [{ positions: q.slice(0, 6), t: 1 }]), JOINTS, 0) ?? '',
      /don't match/,
    );
    assert.equal(validateTrajectory(msg(JOINTS, []), JOINTS, 0), 'Empty trajectory received.');
    assert.match(
      validateTrajectory(msg(['x', ...JOINTS.slice(1)], [{ positions: q, t: 1 }]), JOINTS, 0) ?? '',
      /Incoming joint x/,
    );
    assert.match(
      validateTrajectory(
        msg(JOINTS, [
          { positions: q, t: 1 },
          { positions: q, t: 1 },
        ]),
        JOINTS,
        0,
      ) ?? '',
      /not strictly increasing/,
    );
    assert.match(
      validateTrajectory(msg(JOINTS, [{ positions: q, t: 1, velocities: [0.1, 0, 0, 0, 0, 0, 0] }]), JOINTS, 0) ?? '',
      /Velocity of last trajectory point of joint joint1 is not zero/,
    );
    assert.equal(validateTrajectory(msg([...JOINTS].reverse(), [{ positions: q, t: 1 }]), JOINTS, 0), undefined);
  });

  test('goal tolerances: > 0 sets, -1 erases, an unknown joint keeps every default', () => {
    const set = segmentTolerances(JOINTS, [], [{ name: 'joint2', position: 0.01, velocity: -1, acceleration: 0 }], {
      sec: 1,
      nanosec: 0,
    });
    assert.deepEqual(at(set.goal, 1), { position: 0.01, velocity: 0, acceleration: 0 });
    assert.equal(set.goalTime, 1);
    const ignored = segmentTolerances(
      JOINTS,
      [{ name: 'nope', position: 0.1, velocity: 0, acceleration: 0 }],
      [],
      zero,
    );
    assert.deepEqual(ignored, defaults());
  });

  test('a goal is followed, succeeds at rest past its end, and a new goal aborts the old one with -1', () => {
    const arm = new Arm(model.limits, START);
    const controller = new TrajectoryController(JOINTS, arm);
    const g = goal();
    const target = [0.4, 0.5, 0.1, -1.0, 0.1, 0.8, 0.2];
    controller.accept(msg(JOINTS, [{ positions: target, t: 1 }]), g);
    const t = run(controller, 0, 5, () => g.ended !== undefined);
    assert.equal(g.ended?.status, 'succeeded');
    assert.ok(t >= 1);
    run(controller, t, 1);
    assert.ok(arm.positions.every((p, i) => Math.abs(p - at(target, i)) < 1e-6));
    const first = goal();
    const second = goal();
    controller.accept(msg(JOINTS, [{ positions: START, t: 2 }]), first);
    run(controller, t + 1, 0.3);
    controller.accept(msg(JOINTS, [{ positions: target, t: 2 }]), second);
    assert.deepEqual(first.ended, {
      status: 'aborted',
      errorCode: -1,
      errorString: 'Current goal preempted by new incoming action.',
    });
  });

  test('cancel stops the arm where it is; the arm never exceeds its velocity and acceleration limits', () => {
    const arm = new Arm(model.limits, START);
    const controller = new TrajectoryController(JOINTS, arm);
    const g = goal();
    // Far beyond the limits: 6 rad in 0.1 s.
    controller.accept(msg(JOINTS, [{ positions: [2.9, -2, 2.9, 2, 2.9, -2, 3], t: 0.1 }]), g);
    let worstV = 0;
    let worstA = 0;
    let previous = [...arm.velocities];
    let now = 0;
    for (let k = 0; k < 60; k++) {
      now += 0.01;
      controller.update(now, 0.01);
      arm.velocities.forEach((v, i) => {
        const l = at(model.limits, i);
        worstV = Math.max(worstV, Math.abs(v) / l.velocity);
        worstA = Math.max(worstA, Math.abs(v - at(previous, i)) / 0.01 / l.acceleration);
      });
      previous = [...arm.velocities];
    }
    assert.ok(arm.moving);
    controller.cancel(g, now);
    assert.equal(g.ended?.status, 'canceled');
    for (let k = 0; k < 100; k++) {
      now += 0.01;
      controller.update(now, 0.01);
      arm.velocities.forEach((v, i) => {
        const l = at(model.limits, i);
        worstV = Math.max(worstV, Math.abs(v) / l.velocity);
        worstA = Math.max(worstA, Math.abs(v - at(previous, i)) / 0.01 / l.acceleration);
      });
      previous = [...arm.velocities];
    }
    assert.equal(arm.moving, false);
    assert.ok(worstV > 0.95 && worstV <= 1 + 1e-9, `velocity at ${worstV} of the limit`);
    assert.ok(worstA > 0.95 && worstA <= 1 + 1e-9, `acceleration at ${worstA} of the limit`);
    assert.ok(model.limits.every((l, i) => at(arm.positions, i) >= l.min && at(arm.positions, i) <= l.max));
  });

  test("move_group: FK in `world`, IK round trip, plan FAILURE (99999) inside a box, the scene's operations", () => {
    const arm = new Arm(model.limits, START);
    const mg = new MoveGroup(model, srdf, () => arm.positions, 'tcp');
    assert.deepEqual(linkPose(model, [0, 0, 0, 0, 0, 0, 0], 'tcp')?.p, [0, 0, 1.298]);
    const fk = mg.computeFk({
      fk_link_names: ['tcp'],
      robot_state: { joint_state: { name: JOINTS, position: [0.3, 0.5, 0, -1, 0, 0.9, 0] } },
    });
    assert.equal((fk.error_code as { val: number }).val, 1);
    const pose = (fk.pose_stamped as { header: { frame_id: string }; pose: object }[])[0];
    assert.equal(pose?.header.frame_id, 'world');
    const ik = mg.computeIk({
      ik_request: {
        group_name: 'iiwa_arm',
        pose_stamped: { header: { frame_id: '' }, pose: pose?.pose },
        timeout: { sec: 1, nanosec: 0 },
      },
    });
    assert.equal((ik.error_code as { val: number }).val, 1);
    const far = mg.computeIk({
      ik_request: { group_name: 'iiwa_arm', pose_stamped: { pose: { position: { x: 3, y: 0, z: 0 } } }, timeout: zero },
    });
    assert.equal((far.error_code as { val: number }).val, -31);
    const goalQ = [0.3, 0.5, 0, -1, 0, 0.9, 0];
    const plan = () =>
      (
        mg.planKinematicPath({
          motion_plan_request: {
            group_name: 'iiwa_arm',
            goal_constraints: [
              { joint_constraints: JOINTS.map((joint_name, i) => ({ joint_name, position: goalQ[i] })) },
            ],
          },
        }).motion_plan_response as { error_code: { val: number; message: string } }
      ).error_code;
    assert.equal(plan().val, 1);
    assert.ok(pose);
    const p = (pose.pose as { position: object }).position;
    const add = mg.applyPlanningScene({
      scene: {
        is_diff: true,
        world: {
          collision_objects: [
            {
              id: 'box',
              operation: 0,
              header: { frame_id: 'base_link' },
              pose: { position: p },
              primitives: [{ type: 1, dimensions: [0.1, 0.1, 0.1] }],
            },
          ],
        },
      },
    });
    assert.deepEqual(add, { response: { success: true }, objects: [{ id: 'box', operation: 'add' }] });
    assert.equal(plan().val, 99999);
    assert.match(plan().message, /'box'/);
    assert.equal(
      mg.applyPlanningScene({ scene: { is_diff: true, world: { collision_objects: [{ id: 'other', operation: 1 }] } } })
        .response.success,
      false,
    );
    mg.applyPlanningScene({ scene: { is_diff: true, world: { collision_objects: [{ id: 'box', operation: 1 }] } } });
    assert.equal(plan().val, 1);
  });
});
