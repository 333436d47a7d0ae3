/**
 * The test robot stack's logic without ROS (tests/ros/stack: the mock arm's ros2_control description,
 * move_group's answers), so that `npm test` checks it everywhere; tests/ros/stack.test.ts checks the same stack
 * over a real ROS 2 graph.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { controllersYaml, withRos2Control } from './stack/control.ts';
import { linkPose, loadModel } from './stack/model.ts';
import { MoveGroup } from './stack/moveit.ts';
import { FILES } from './stack/stack.ts';

const model = loadModel(readFileSync(FILES.urdf, 'utf8'), readFileSync(FILES.limits, 'utf8'));
const srdf = readFileSync(FILES.srdf, 'utf8');
const JOINTS = model.jointNames;
const START = [0, 0.3, 0, -1.2, 0, 0.9, 0];
const zero = { sec: 0, nanosec: 0 };

describe('the test stack without ROS', () => {
  test('the mock arm for ros2_control: the URDF with a GenericSystem of the 7 joints in the order asked, starting at START; the controllers as the endpoints file names them', () => {
    const urdf = readFileSync(FILES.urdf, 'utf8');
    const order = [2, 0, 6, 4, 1, 5, 3];
    const described = withRos2Control(urdf, model, START, order);
    assert.ok(described.startsWith(urdf.replace(/<\/robot>\s*$/, '')), 'the URDF itself is unchanged');
    const block = described.slice(described.indexOf('<ros2_control'));
    assert.match(block, /<plugin>mock_components\/GenericSystem<\/plugin>/);
    assert.match(block, /<\/ros2_control>\n<\/robot>\n$/);
    const names = [...block.matchAll(/<joint name="([^"]+)">/g)].map((m) => m[1]);
    assert.deepEqual(
      names,
      order.map((i) => JOINTS[i]),
    );
    const initial = [...block.matchAll(/name="position"><param name="initial_value">([^<]+)</g)].map((m) =>
      Number(m[1]),
    );
    assert.deepEqual(
      initial,
      order.map((i) => START[i]),
    );
    assert.equal([...block.matchAll(/<command_interface name="position">/g)].length, 7);
    assert.equal([...block.matchAll(/<state_interface name="velocity">/g)].length, 7);
    const yaml = controllersYaml(JOINTS, ['joint3', 'joint1']);
    assert.match(yaml, /iiwa_arm_controller:\n {6}type: joint_trajectory_controller\/JointTrajectoryController/);
    assert.match(yaml, /joints: \[joint1, joint2, joint3, joint4, joint5, joint6, joint7\]/);
    assert.match(yaml, /joints: \[joint3, joint1\]/);
    assert.match(yaml, /allow_partial_joints_goal: false/);
  });

  test("move_group: FK in `world`, IK round trip, plan FAILURE (99999) inside a box, the scene's operations", () => {
    const mg = new MoveGroup(model, srdf, () => START, 'tcp');
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
