import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadRclnodejs } from '../../lib/ros/rcl-load.ts';

// rclnodejs 2.2 installs `process.on('SIGINT', _sigHandler)` when it is imported (dist/index.js),
// which shuts every context down before the application's own handler runs; it offers
// removeSignalHandlers() for applications with their own shutdown. The fake module below does the
// same on import.

const ENV = { ROS_DISTRO: 'jazzy', AMENT_PREFIX_PATH: '/opt/ros/jazzy' };

describe('rclnodejs signal handling: armgate shuts down first', () => {
  it("removes rclnodejs's own SIGINT handler when loading it, so armgate's shutdown runs alone", async () => {
    let shutDownByRcl = 0;
    const rclSigint = () => {
      shutDownByRcl++;
    };
    const fake = {
      init: async () => undefined,
      shutdown: () => undefined,
      Node: class {},
      ActionClient: class {},
      removeSignalHandlers: () => {
        process.removeListener('SIGINT', rclSigint);
      },
    };
    const importer = async () => {
      process.on('SIGINT', rclSigint); // what importing rclnodejs does
      return { default: fake };
    };
    try {
      const loaded = await loadRclnodejs(ENV, importer);
      assert.ok(loaded.ok, 'the module loads');
      assert.ok(
        !process.listeners('SIGINT').includes(rclSigint),
        "rclnodejs's SIGINT handler is gone once armgate has loaded it",
      );
      assert.equal(shutDownByRcl, 0, 'nothing was shut down by rclnodejs');
    } finally {
      process.removeListener('SIGINT', rclSigint);
    }
  });

  it('loads a module without removeSignalHandlers (the test stand-ins) as before', async () => {
    const fake = { init: async () => undefined, shutdown: () => undefined, Node: class {}, ActionClient: class {} };
    const loaded = await loadRclnodejs(ENV, async () => ({ default: fake }));
    assert.ok(loaded.ok && (loaded.value as unknown) === fake, 'the module is returned as it is');
  });
});
