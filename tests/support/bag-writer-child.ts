/**
 * A process that records joint states into a bag until it is killed, for the SIGKILL test of the bag
 * writer: `node --import tsx bag-writer-child.ts FOLDER`. Writes one message every 10 ms, received
 * now; prints `recording` once the bag is open.
 */
import { Rosbag2Writer } from '../../lib/bag/writer.ts';

const folder = process.argv[2];
if (!folder) throw new Error('usage: bag-writer-child.ts FOLDER');
const bag = await Rosbag2Writer.open(folder, [{ name: '/joint_states', type: 'sensor_msgs/msg/JointState' }]);
process.stdout.write('recording\n');
let i = 0;
setInterval(() => {
  const ns = BigInt(Date.now()) * 1_000_000n;
  const stamp = { sec: Number(ns / 1_000_000_000n), nanosec: Number(ns % 1_000_000_000n) };
  const position = [i * 1e-3, 0, 0, -1.57, 0, 1.57, 0];
  i += 1;
  bag
    .write(
      '/joint_states',
      {
        header: { stamp, frame_id: '' },
        name: ['joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6', 'joint7'],
        position,
        velocity: [],
        effort: [],
      },
      ns,
    )
    .catch((e: unknown) => {
      process.stderr.write(`${(e as Error).message}\n`);
    });
}, 10);
