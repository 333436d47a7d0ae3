import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BACKEND_DEFAULTS } from '../../lib/settings/endpoints.ts';
import { type Config, loadConfig } from '../../lib/settings/load.ts';

// The endpoints file's tcp_link and srdf depend on the backend when it leaves them out: the
// simulator keeps its bundled model's flange and SRDF; a real stack (ros2) gets its TCP link `tcp`
// and the SRDF move_group runs with (its robot_description_semantic parameter).

let dir: string;
/** Where pkg://armgate/srdf/iiwa7.srdf resolves (references are resolved when the settings are loaded). */
const BUNDLED_SRDF = path.resolve(import.meta.dirname, '../../share/armgate/srdf/iiwa7.srdf');

async function load(backend: 'sim' | 'ros2', endpoints?: string): Promise<Config> {
  const lines = [`robot: {backend: ${backend}}`];
  if (endpoints !== undefined) {
    await writeFile(path.join(dir, `endpoints-${backend}.yaml`), endpoints);
    lines.push(`web: {endpoints: ./endpoints-${backend}.yaml}`);
  }
  const file = path.join(dir, `settings-${backend}-${endpoints === undefined ? 'bundled' : 'own'}.yaml`);
  await writeFile(file, `${lines.join('\n')}\n`);
  const loaded = await loadConfig(file, { env: {} });
  assert.ok(loaded.ok, loaded.ok ? '' : loaded.error);
  assert.ok(loaded.value.kind === 'serve', 'the web block is enabled');
  return loaded.value.config;
}

describe('endpoints: the backends defaults for tcp_link and the SRDF', () => {
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'armgate-endpoints-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('gives the simulator the flange and the bundled SRDF, with its named positions', async () => {
    const config = await load('sim');
    assert.equal(config.endpoints.tcp_link, 'flange');
    assert.deepEqual(config.endpoints.srdf, { file: BUNDLED_SRDF }, 'the bundled SRDF, its reference resolved');
    assert.ok(
      config.groupStates?.some((s) => s.name === 'work'),
      'the bundled SRDF was read',
    );
  });

  it("gives ros2 the real stack's tcp link and move_group's SRDF parameter (no file read)", async () => {
    const config = await load('ros2');
    assert.equal(config.endpoints.tcp_link, 'tcp');
    assert.deepEqual(config.endpoints.srdf, { node: '/move_group', parameter: 'robot_description_semantic' });
    assert.equal(config.groupStates, undefined, 'the group states come from the node at run time');
    assert.deepEqual(BACKEND_DEFAULTS.ros2.srdf, config.endpoints.srdf, 'as documented');
  });

  it('keeps what the endpoints file sets explicitly, on ros2 too (the bundled SRDF as the fallback)', async () => {
    const config = await load(
      'ros2',
      [
        'tcp_link: flange',
        'robot_description: pkg://armgate/urdf/iiwa7.urdf',
        'srdf: {file: pkg://armgate/srdf/iiwa7.srdf}',
      ].join('\n'),
    );
    assert.equal(config.endpoints.tcp_link, 'flange');
    assert.deepEqual(config.endpoints.srdf, { file: BUNDLED_SRDF }, 'the bundled SRDF, its reference resolved');
    assert.ok(
      config.groupStates?.some((s) => s.name === 'home'),
      'the SRDF file was read',
    );
  });

  it('names compute_ik and the controller action with their types, and an IK time budget', async () => {
    const { interfaces, timeouts } = (await load('ros2')).endpoints;
    assert.deepEqual(interfaces.compute_ik, { name: '/compute_ik', type: 'moveit_msgs/srv/GetPositionIK' });
    assert.deepEqual(interfaces.follow_joint_trajectory, {
      name: '/iiwa_arm_controller/follow_joint_trajectory',
      type: 'control_msgs/action/FollowJointTrajectory',
    });
    assert.equal(timeouts.ik_s, 1);
  });

  it("names MoveIt's planning scene and plan-only services with their types, and a planning time", async () => {
    const { interfaces, timeouts } = (await load('ros2')).endpoints;
    assert.deepEqual(interfaces.apply_planning_scene, {
      name: '/apply_planning_scene',
      type: 'moveit_msgs/srv/ApplyPlanningScene',
    });
    assert.deepEqual(interfaces.plan_kinematic_path, {
      name: '/plan_kinematic_path',
      type: 'moveit_msgs/srv/GetMotionPlan',
    });
    assert.equal(timeouts.plan_s, 5, 'timeouts.plan_s');
  });

  it('still refuses unknown keys in the endpoints file (strict)', async () => {
    await writeFile(path.join(dir, 'typo.yaml'), 'tcp_lnk: tcp\n');
    const file = path.join(dir, 'settings-typo.yaml');
    await writeFile(file, 'web: {endpoints: ./typo.yaml}\n');
    const loaded = await loadConfig(file, { env: {} });
    assert.ok(!loaded.ok, 'a typo is an error');
    if (!loaded.ok) assert.match(loaded.error, /tcp_lnk/);
  });
});
