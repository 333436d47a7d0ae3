/**
 * What the Foxglove channels carry, and where it comes from: the joint states as armgate receives them (the
 * simulator's, or the stack's on ros2), /tf and /tf_static by armgate's own forward kinematics over the robot
 * description (as robot_state_publisher computes them: lib/sim/robot-state.ts, which the simulator's bags use too),
 * /robot_description, and armgate's own state: the motion and sequence status and every other event of the bus, the
 * safety envelope and the named positions as markers, and the trajectory being executed.
 */
import { createFkWorkspace, forwardKinematics } from '../kinematics/fk.ts';
import type { Services } from '../app/services.ts';
import type { EventType, MotionEvent } from '../events/bus.ts';
import type { RobotContext } from '../ros/context.ts';
import type { JointStateMsg } from '../ros/messages.ts';
import type { SequenceStatus } from '../sequences/supervisor.ts';
import { ROBOT_STATE_TOPICS, RobotStateMessages } from '../sim/robot-state.ts';
import type { ChannelDef, ChannelHub } from './hub.ts';

/** armgate's own topics. */
export const ARMGATE_TOPICS = {
  motion: '/armgate/motion',
  sequence: '/armgate/sequence',
  events: '/armgate/events',
  safety: '/armgate/safety',
  positions: '/armgate/positions',
  trajectory: '/armgate/trajectory',
} as const;

/** A topic name with its leading slash (Foxglove shows names as a ROS 2 graph does). */
const absolute = (name: string) => (name.startsWith('/') ? name : `/${name}`);

/** The channels, in the order they are advertised. */
export function channelDefs(context: RobotContext): ChannelDef[] {
  const { joint_states, trajectory } = context.endpoints.interfaces;
  return [
    { topic: absolute(joint_states.name), type: 'sensor_msgs/msg/JointState', latched: false },
    { topic: ROBOT_STATE_TOPICS.tf.name, type: ROBOT_STATE_TOPICS.tf.type, latched: false },
    { topic: ROBOT_STATE_TOPICS.tf_static.name, type: ROBOT_STATE_TOPICS.tf_static.type, latched: true },
    {
      topic: ROBOT_STATE_TOPICS.robot_description.name,
      type: ROBOT_STATE_TOPICS.robot_description.type,
      latched: true,
    },
    { topic: ARMGATE_TOPICS.motion, type: 'armgate_msgs/msg/MotionStatus', latched: true },
    { topic: ARMGATE_TOPICS.sequence, type: 'armgate_msgs/msg/SequenceStatus', latched: true },
    { topic: ARMGATE_TOPICS.events, type: 'armgate_msgs/msg/Event', latched: false },
    { topic: ARMGATE_TOPICS.safety, type: 'visualization_msgs/msg/MarkerArray', latched: true },
    { topic: ARMGATE_TOPICS.positions, type: 'visualization_msgs/msg/MarkerArray', latched: true },
    { topic: ARMGATE_TOPICS.trajectory, type: trajectory.type, latched: true },
  ];
}

const stampOf = (ms: number) => ({ sec: Math.floor(ms / 1000), nanosec: Math.round((ms % 1000) * 1e6) % 1e9 });
const header = (frame = '') => ({ stamp: stampOf(Date.now()), frame_id: frame });

/** An RGBA colour from 0xRRGGBB and alpha (the live page's colours). */
const rgba = (hex: number, a = 1) => ({
  r: ((hex >> 16) & 255) / 255,
  g: ((hex >> 8) & 255) / 255,
  b: (hex & 255) / 255,
  a,
});
/** The live page's colours (lib/ui/static/envelope.js and app.js). */
const WORKSPACE_COLOR = 0x0b63b5;
const KEEP_OUT_COLOR = 0xd62828;
const ARM_COLOR = 0xf28a1f;
const IDENTITY = { position: { x: 0, y: 0, z: 0 }, orientation: { x: 0, y: 0, z: 0, w: 1 } };

interface Box {
  readonly min: readonly number[];
  readonly max: readonly number[];
}

/** The 12 edges of a box as a LINE_LIST's points. */
function boxEdges({ min, max }: Box) {
  const c = (i: number) => ({
    x: (i & 1 ? max[0] : min[0]) ?? 0,
    y: (i & 2 ? max[1] : min[1]) ?? 0,
    z: (i & 4 ? max[2] : min[2]) ?? 0,
  });
  const pairs = [0, 1, 2, 3, 4, 5, 6, 7, 0, 2, 1, 3, 4, 6, 5, 7, 0, 4, 1, 5, 2, 6, 3, 7];
  return pairs.map(c);
}

const centre = ({ min, max }: Box) => ({
  x: ((min[0] ?? 0) + (max[0] ?? 0)) / 2,
  y: ((min[1] ?? 0) + (max[1] ?? 0)) / 2,
  z: ((min[2] ?? 0) + (max[2] ?? 0)) / 2,
});

/** The safety envelope as markers: the workspace as a blue wireframe, each keep-out box red and named. */
export function envelopeMarkers(safety: Services['safety'], frame: string) {
  const envelope = safety?.envelope;
  const markers: Record<string, unknown>[] = [{ header: header(frame), action: 3 }]; // DELETEALL first
  if (!envelope) return { markers };
  let id = 0;
  if (envelope.workspace)
    markers.push({
      header: header(frame),
      ns: 'workspace',
      id: id++,
      type: 5, // LINE_LIST
      pose: IDENTITY,
      scale: { x: 0.005, y: 0, z: 0 },
      color: rgba(WORKSPACE_COLOR),
      points: boxEdges(envelope.workspace),
    });
  for (const box of envelope.keepOut) {
    const size = [0, 1, 2].map((i) => Math.max((box.max[i] ?? 0) - (box.min[i] ?? 0), 1e-3));
    markers.push({
      header: header(frame),
      ns: 'keep_out',
      id: id++,
      type: 1, // CUBE
      pose: { position: centre(box), orientation: IDENTITY.orientation },
      scale: { x: size[0], y: size[1], z: size[2] },
      color: rgba(KEEP_OUT_COLOR, 0.28),
    });
    markers.push({
      header: header(frame),
      ns: 'keep_out_names',
      id: id++,
      type: 9, // TEXT_VIEW_FACING
      pose: { position: { ...centre(box), z: (box.max[2] ?? 0) + 0.05 }, orientation: IDENTITY.orientation },
      scale: { x: 0, y: 0, z: 0.05 },
      color: rgba(KEEP_OUT_COLOR),
      text: box.name,
    });
  }
  return { markers };
}

/** A position to show: its name and joint angles (J1..J7). */
export interface ShownPosition {
  readonly name: string;
  readonly jointsRad: readonly number[];
  /** `named` (the SRDF's group states); the teach work adds `taught`. */
  readonly kind: string;
}

/** The positions as markers: a sphere at the TCP of each (armgate's FK) and its name above it. */
export function positionMarkers(positions: readonly ShownPosition[], safety: Services['safety'], frame: string) {
  const markers: Record<string, unknown>[] = [{ header: header(frame), action: 3 }];
  const chain = safety?.chain;
  if (!chain || chain.jointNames.length === 0) return { markers };
  const ws = createFkWorkspace(chain);
  let id = 0;
  for (const p of positions) {
    if (p.jointsRad.length !== chain.jointNames.length) continue;
    forwardKinematics(chain, p.jointsRad, ws);
    const position = { x: ws.tipPos[0] ?? 0, y: ws.tipPos[1] ?? 0, z: ws.tipPos[2] ?? 0 };
    markers.push({
      header: header(frame),
      ns: p.kind,
      id: id++,
      type: 2, // SPHERE
      pose: { position, orientation: IDENTITY.orientation },
      scale: { x: 0.03, y: 0.03, z: 0.03 },
      color: rgba(p.kind === 'named' ? ARM_COLOR : WORKSPACE_COLOR, 0.9),
    });
    markers.push({
      header: header(frame),
      ns: `${p.kind}_names`,
      id: id++,
      type: 9,
      pose: { position: { ...position, z: position.z + 0.05 }, orientation: IDENTITY.orientation },
      scale: { x: 0, y: 0, z: 0.04 },
      color: rgba(0x222222),
      text: p.name,
    });
  }
  return { markers };
}

/** What the feeds read. */
export interface FeedSources {
  readonly context: RobotContext;
  readonly services: Services;
  /** The URDF /robot_description and /tf are made from (ros2: the stack's when it answers). */
  readonly robotDescriptionXml: string;
  /**
   * The positions /armgate/positions shows. Default: the SRDF's named positions. The seam of the teach work: its
   * taught positions go here too, and it calls the feeds' `refreshPositions` when they change.
   */
  readonly positions?: () => Promise<readonly ShownPosition[]>;
}

/** The running feeds: `refreshPositions` republishes /armgate/positions; `close` disconnects everything. */
export interface Feeds {
  refreshPositions(): Promise<void>;
  close(): void;
}

/** Connects the hub's channels to their sources. */
export function startFeeds(hub: ChannelHub, sources: FeedSources): Feeds {
  const { context, services } = sources;
  const frame = context.endpoints.planning_frame;
  const jointTopic = absolute(context.endpoints.interfaces.joint_states.name);
  const robotState = new RobotStateMessages(sources.robotDescriptionXml);
  hub.publish(ROBOT_STATE_TOPICS.robot_description.name, robotState.description);
  hub.publish(ROBOT_STATE_TOPICS.tf_static.name, robotState.tfStatic(stampOf(Date.now())));
  hub.publish(ARMGATE_TOPICS.safety, envelopeMarkers(services.safety, frame));
  hub.publish(ARMGATE_TOPICS.sequence, sequenceMsg(services.sequences.status()));
  hub.publish(ARMGATE_TOPICS.motion, { header: header(), id: 0, kind: '', state: 'idle', message: 'no motion yet' });
  const offJoints = context.subscribe(context.endpoints.interfaces.joint_states.name, (raw) => {
    const msg = raw as JointStateMsg;
    const timeNs = BigInt(msg.header.stamp.sec) * 1_000_000_000n + BigInt(msg.header.stamp.nanosec);
    hub.publish(jointTopic, msg, timeNs);
    if (hub.wanted(ROBOT_STATE_TOPICS.tf.name)) hub.publish(ROBOT_STATE_TOPICS.tf.name, robotState.tf(msg), timeNs);
  });
  const offTrajectory = context.subscribe(context.endpoints.interfaces.trajectory.name, (msg) =>
    hub.publish(ARMGATE_TOPICS.trajectory, msg),
  );
  const positions =
    sources.positions ??
    (async () => {
      const states = await context.groupStates();
      return states.ok ? states.value.map((s) => ({ name: s.name, jointsRad: s.jointsRad, kind: 'named' })) : [];
    });
  let closed = false;
  const refreshPositions = async () => {
    const list = await positions().catch(() => []);
    if (!closed) hub.publish(ARMGATE_TOPICS.positions, positionMarkers(list, services.safety, frame));
  };
  void refreshPositions();
  const offEvents = services.events?.observe((type: Exclude<EventType, 'joint_state'>, data: unknown) => {
    if (type === 'motion') {
      const m = data as MotionEvent;
      hub.publish(ARMGATE_TOPICS.motion, {
        header: header(),
        id: m.id,
        kind: m.kind,
        state: m.state,
        message: m.message,
      });
    } else if (type === 'sequence') hub.publish(ARMGATE_TOPICS.sequence, sequenceMsg(data as SequenceStatus));
    // A position taught or deleted (the teach work's `positions` event): the markers are drawn again.
    else if ((type as string) === 'positions') void refreshPositions();
    if (hub.wanted(ARMGATE_TOPICS.events))
      hub.publish(ARMGATE_TOPICS.events, { header: header(), type, json: JSON.stringify(data) });
  });
  return {
    refreshPositions,
    close() {
      closed = true;
      offJoints();
      offTrajectory();
      offEvents?.();
    },
  };
}

/** armgate_msgs/msg/SequenceStatus of a status (-1: not applicable). */
function sequenceMsg(status: SequenceStatus) {
  const s = status as Partial<Record<string, unknown>> & { status: string };
  return {
    header: header(),
    status: s.status,
    iteration: typeof s.iteration === 'number' ? s.iteration : -1,
    n_iterations: typeof s.n_iterations === 'number' ? s.n_iterations : -1,
    point: typeof s.point === 'string' ? s.point : '',
    returncode: typeof s.returncode === 'number' ? s.returncode : -1,
    bag_path: typeof s.bag_path === 'string' ? s.bag_path : '',
  };
}
