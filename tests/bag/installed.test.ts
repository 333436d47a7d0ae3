import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseMsg } from '@foxglove/rosmsg';
import { MessageReader, MessageWriter } from '@foxglove/rosmsg2-serialization';
import { McapStreamReader } from '@mcap/core';
import { definitionFor } from '../../lib/bag/definitions.ts';
import { amentPrefixes, DefinitionSource, installedMsgLookup } from '../../lib/bag/installed.ts';
import { Rosbag2Writer } from '../../lib/bag/writer.ts';
import { FIXTURE_AMENT_PREFIX } from '../support/rcl-server.ts';

const RULE = `\n${'='.repeat(80)}\n`;
const fixture = (pkg: string, type: string) =>
  readFile(path.join(FIXTURE_AMENT_PREFIX, 'share', pkg, 'msg', `${type}.msg`), 'utf8');

describe('message definitions from the installed interface packages', () => {
  let other: string;
  before(async () => {
    other = await mkdtemp(path.join(os.tmpdir(), 'armgate-prefix-'));
    await mkdir(path.join(other, 'share', 'std_msgs', 'msg'), { recursive: true });
    await writeFile(
      path.join(other, 'share', 'std_msgs', 'msg', 'Header.msg'),
      '# overlay\nbuiltin_interfaces/Time stamp\nstring frame_id\n',
    );
  });
  after(() => rm(other, { recursive: true, force: true }));

  it('takes the absolute prefixes of AMENT_PREFIX_PATH in order', () => {
    assert.deepEqual(amentPrefixes({ AMENT_PREFIX_PATH: '/opt/ws/install:relative/dir::/opt/ros/jazzy' }), [
      '/opt/ws/install',
      '/opt/ros/jazzy',
    ]);
    assert.deepEqual(amentPrefixes({}), []);
  });

  it('assembles the installed .msg texts verbatim, comments kept, dependencies after the root in rosbag2 order', async () => {
    const found = new DefinitionSource([FIXTURE_AMENT_PREFIX]).definition('trajectory_msgs/msg/JointTrajectory');
    assert.ok(found.ok, found.ok ? '' : found.error);
    const expected =
      `${await fixture('trajectory_msgs', 'JointTrajectory')}${RULE}MSG: std_msgs/Header\n${await fixture('std_msgs', 'Header')}` +
      `${RULE}MSG: builtin_interfaces/Time\n${await fixture('builtin_interfaces', 'Time')}` +
      `${RULE}MSG: trajectory_msgs/JointTrajectoryPoint\n${await fixture('trajectory_msgs', 'JointTrajectoryPoint')}` +
      `${RULE}MSG: builtin_interfaces/Duration\n${await fixture('builtin_interfaces', 'Duration')}`;
    assert.deepEqual(found.value, { text: expected, from: 'installed' });
    // The text parses as a ROS 2 definition and has the fields of the built-in one.
    const fields = (text: string) =>
      parseMsg(text, { ros2: true }).map((d) => [
        d.name,
        d.definitions.map((f) => `${f.type}${f.isArray ? '[]' : ''} ${f.name}`),
      ]);
    assert.deepEqual(fields(found.value.text), fields(definitionFor('trajectory_msgs/msg/JointTrajectory') ?? ''));
  });

  it('lets the first prefix that has a file win (an overlay workspace before /opt/ros)', () => {
    const found = new DefinitionSource([other, FIXTURE_AMENT_PREFIX]).definition('sensor_msgs/msg/JointState');
    assert.ok(found.ok);
    assert.match(found.value.text, /MSG: std_msgs\/Header\n# overlay\n/);
  });

  it("falls back to armgate's built-in definition, and says so, when a type is not installed", () => {
    const found = new DefinitionSource([FIXTURE_AMENT_PREFIX]).definition('geometry_msgs/msg/PoseStamped');
    assert.deepEqual(found, {
      ok: true,
      value: { text: definitionFor('geometry_msgs/msg/PoseStamped'), from: 'built-in' },
    });
  });

  it('names the missing type and where it looked when neither has it', () => {
    assert.deepEqual(new DefinitionSource([FIXTURE_AMENT_PREFIX]).definition('rcl_interfaces/msg/Log'), {
      ok: false,
      error: `no definition of rcl_interfaces/msg/Log (looked in share/<pkg>/msg under ${FIXTURE_AMENT_PREFIX})`,
    });
    assert.deepEqual(new DefinitionSource([]).definition('rcl_interfaces/msg/Log'), {
      ok: false,
      error: 'no definition of rcl_interfaces/msg/Log (AMENT_PREFIX_PATH names no install prefix)',
    });
    const partial = new DefinitionSource([other]).definition('std_msgs/msg/Header');
    assert.equal(
      partial.ok && partial.value.from,
      'built-in',
      'a root whose dependency is missing is not half-installed',
    );
  });

  it('never reads outside share/<pkg>/msg: names with path characters are not types', () => {
    const lookup = installedMsgLookup([FIXTURE_AMENT_PREFIX]);
    assert.equal(lookup('..', 'Time'), undefined);
    assert.equal(lookup('builtin_interfaces', '../msg/Time'), undefined);
    assert.equal(lookup('builtin_interfaces', 'Time')?.includes('int32 sec'), true);
    const source = new DefinitionSource([FIXTURE_AMENT_PREFIX]);
    for (const type of ['../../etc/passwd', 'std_msgs/msg/../Header', 'std_msgs/srv/Header', 'std_msgs/Header']) {
      assert.deepEqual(source.definition(type), {
        ok: false,
        error: `${type} is not a message type name (pkg/msg/Type)`,
      });
    }
  });
});

describe('Rosbag2Writer.writeSerialized (raw CDR from a serialized subscription)', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'armgate-raw-bag-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('stores the bytes as received under the schema it was given, readable by a CDR reader', async () => {
    const source = new DefinitionSource([FIXTURE_AMENT_PREFIX]).definition('sensor_msgs/msg/JointState');
    assert.ok(source.ok);
    const definition = source.value.text;
    const folder = path.join(dir, 'raw');
    const bag = await Rosbag2Writer.open(folder, [
      { name: '/joint_states', type: 'sensor_msgs/msg/JointState', definition },
    ]);
    const message = {
      header: { stamp: { sec: 3, nanosec: 4 }, frame_id: 'base_link' },
      name: ['joint1'],
      position: [0.5],
      velocity: [],
      effort: [],
    };
    const cdr = new MessageWriter(parseMsg(definition, { ros2: true })).writeMessage(message);
    const buffer = Buffer.from(cdr);
    const written = bag.writeSerialized('/joint_states', buffer, 1_000n);
    buffer.fill(0); // the writer copied the bytes at once
    await written;
    await assert.rejects(
      bag.writeSerialized('/joint_states', new Uint8Array([1, 2, 3, 4, 5]), 2_000n),
      /serialized message on \/joint_states is not CDR \(5 bytes, header 1 2 3 4\)/,
    );
    await assert.rejects(bag.writeSerialized('/joint_states', new Uint8Array([0, 1]), 2_000n), /is not CDR \(2 bytes/);
    await assert.rejects(bag.writeSerialized('/tf', cdr, 2_000n), /topic \/tf is not in this bag/);
    await bag.close();
    const files = await readdir(folder);
    const mcap = files.find((f) => f.endsWith('.mcap')) ?? '';
    const stream = new McapStreamReader();
    stream.append(await readFile(path.join(folder, mcap)));
    const records = [];
    for (let r = stream.nextRecord(); r; r = stream.nextRecord()) records.push(r);
    const schema = records.find((r) => r.type === 'Schema');
    const stored = records.filter((r) => r.type === 'Message');
    assert.equal(schema?.type === 'Schema' && new TextDecoder().decode(schema.data), definition);
    assert.equal(stored.length, 1);
    const only = stored[0];
    assert.ok(only?.type === 'Message');
    assert.deepEqual(only.data, cdr);
    const decoded = new MessageReader(parseMsg(definition, { ros2: true })).readMessage<typeof message>(only.data);
    assert.deepEqual(
      {
        ...decoded,
        position: Array.from(decoded.position),
        velocity: Array.from(decoded.velocity),
        effort: Array.from(decoded.effort),
      },
      message,
    );
  });

  it('refuses topics of one type with two different definitions', async () => {
    await assert.rejects(
      Rosbag2Writer.open(path.join(dir, 'mixed'), [
        { name: '/a', type: 'std_msgs/msg/String', definition: 'string data\n' },
        { name: '/b', type: 'std_msgs/msg/String', definition: '# other\nstring data\n' },
      ]),
      /topics of type std_msgs\/msg\/String come with different definitions/,
    );
  });
});
