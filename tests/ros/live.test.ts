import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadRclnodejs } from '../../lib/ros/rcl-load.ts';
import { type RunningServer, startServer } from '../../lib/server/start.ts';
import { loadConfig } from '../../lib/settings/load.ts';
import {
  call,
  checkJointStates,
  checkMoves,
  checkPose,
  checkPositions,
  checkSequenceWithBag,
  checkStopCancels,
  checkTrajectoryAndBusyRule,
  detailOf,
  type MotionBody,
} from '../support/rcl-checks.ts';
import { writeSettings } from '../support/server.ts';

// The end-to-end checks of tests/ros/rcl-context.test.ts against a REAL ROS 2 graph through the
// real rclnodejs, with the settings in ARMGATE_LIVE_SETTINGS (default: the bundled settings with
// robot.backend ros2). It needs a sourced ROS 2 (ROS_DISTRO), rclnodejs built against it, and a
// stack serving the endpoints file's interfaces, e.g. the mock stack of tests/ros/mock-stack
// (docs/ros2.md: "Deploying next to a ROS 2 stack"). Without ROS 2 or rclnodejs it registers no tests
// and says so in one line: it never passes as if it had tested something.

async function gate(): Promise<string | undefined> {
  if (!process.env.ROS_DISTRO) return 'ROS_DISTRO is not set (no ROS 2 sourced)';
  const loaded = await loadRclnodejs(process.env);
  return loaded.ok ? undefined : loaded.error;
}

const notRun = await gate();

if (notRun !== undefined) {
  console.log(`live ROS 2 suite not run: ${notRun}`);
} else {
  describe(`live ROS 2 graph (${process.env.ROS_DISTRO}): every handler through rclnodejs`, () => {
    let server: RunningServer;
    let url: string;
    let cleanup: () => Promise<void> = async () => undefined;
    let bagRoot = '';
    before(async () => {
      let file = process.env.ARMGATE_LIVE_SETTINGS;
      if (!file) {
        const written = await writeSettings({
          robot: { backend: 'ros2' },
          sequences: { bag_root: path.join(tmpdir(), `armgate-live-bags-${process.pid}`) },
        });
        file = written.file;
        cleanup = written.cleanup;
      }
      const loaded = await loadConfig(file);
      assert.ok(loaded.ok, loaded.ok ? '' : loaded.error);
      assert.equal(loaded.value.kind, 'serve');
      if (loaded.value.kind !== 'serve') return;
      assert.equal(loaded.value.config.robot.backend, 'ros2', `${file}: robot.backend must be ros2`);
      bagRoot = loaded.value.config.sequences.bagRoot;
      server = await startServer(
        { ...loaded.value.config, web: { ...loaded.value.config.web, host: '127.0.0.1', port: 0 } },
        { log: () => undefined },
      );
      url = server.url;
      await call(url, '/robot/move/named', { name: 'work', speed: 0.5 });
    });
    after(async () => {
      await server?.close();
      await cleanup();
    });

    it('serves joint states from the controller in J1..J7 order', () => checkJointStates(url).then(() => undefined));
    it('computes the TCP pose through the FK service', () => checkPose(url).then(() => undefined));
    it('lists the SRDF group states', () => checkPositions(url));
    it('moves through the action servers and the named-pose service', () => checkMoves(url));
    it('cancels the goal in flight on POST /stop and holds', () => checkStopCancels(url));
    it('publishes a trajectory the controller follows, with the 409 rule', () => checkTrajectoryAndBusyRule(url, 2));
    it("runs a sequence on the runner's own node and records a bag from a raw subscription", async () => {
      const logs = await checkSequenceWithBag(url, path.join(bagRoot, `live-${Date.now()}`));
      assert.match(logs, /recording \/joint_states \(sensor_msgs\/msg\/JointState\)/);
    });
    it('keeps a goal that cannot be planned a 200 with success false', async () => {
      const reply = await call<MotionBody>(url, '/robot/move/pose', { x: 3, y: 0, z: 0.5, b: Math.PI });
      assert.equal(reply.status, 200, detailOf(reply));
      assert.equal(reply.body.success, false);
    });
  });
}
