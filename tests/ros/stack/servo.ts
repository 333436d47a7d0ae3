/**
 * A MoveIt Servo imitation for the test stack (`main.ts --servo`): a node `servo_node` with MoveIt 2 Jazzy's
 * servo_node interfaces under their default names: the service `/servo_node/switch_command_type`
 * (moveit_msgs/srv/ServoCommandType), the topics `/servo_node/delta_joint_cmds` (control_msgs/msg/JointJog) and
 * `/servo_node/delta_twist_cmds` (geometry_msgs/msg/TwistStamped). It records what arrives (it moves nothing): each
 * switch (`servo_switch`) and each command (`servo_command`: its kind, whether the command type in force takes it,
 * its stamp, its age on receipt against this process's clock, the velocities or the twist and frame). It starts in
 * POSE, as nothing else here takes: only a client that switches first has its commands taken, as with the real one.
 */
import type { StackNode, StackRcl } from './rcl.ts';

type Emit = (event: Record<string, unknown>) => void;

const COMMAND_TYPES = { jointJog: 0, twist: 1, pose: 2 } as const;

interface Stamped {
  readonly header?: {
    readonly stamp?: { readonly sec?: number; readonly nanosec?: number };
    readonly frame_id?: string;
  };
}

const seconds = (msg: Stamped) => (msg.header?.stamp?.sec ?? 0) + (msg.header?.stamp?.nanosec ?? 0) / 1e9;

/** Starts the imitation's node (not spinning yet: the stack spins its nodes). */
export function startServoImitation(rcl: StackRcl, emit: Emit): StackNode {
  const node = new rcl.Node('servo_node');
  let commandType: number = COMMAND_TYPES.pose;
  node.createService('moveit_msgs/srv/ServoCommandType', '/servo_node/switch_command_type', {}, (request) => {
    const asked = Number((request as { command_type?: number }).command_type);
    const success = asked === COMMAND_TYPES.jointJog || asked === COMMAND_TYPES.twist || asked === COMMAND_TYPES.pose;
    if (success) commandType = asked;
    emit({ event: 'servo_switch', command_type: asked, success });
    return { success };
  });
  const received = (kind: 'joint_jog' | 'twist', expected: number, msg: Stamped, extra: Record<string, unknown>) => {
    const stampS = seconds(msg);
    emit({
      event: 'servo_command',
      kind,
      taken: commandType === expected,
      stamp_s: stampS,
      age_s: Date.now() / 1000 - stampS,
      frame_id: msg.header?.frame_id ?? '',
      ...extra,
    });
  };
  node.createSubscription('control_msgs/msg/JointJog', '/servo_node/delta_joint_cmds', {}, (message) => {
    const msg = message as Stamped & { joint_names?: string[]; velocities?: ArrayLike<number> };
    received('joint_jog', COMMAND_TYPES.jointJog, msg, {
      joint_names: [...(msg.joint_names ?? [])],
      velocities: Array.from(msg.velocities ?? [], Number),
    });
  });
  node.createSubscription('geometry_msgs/msg/TwistStamped', '/servo_node/delta_twist_cmds', {}, (message) => {
    const msg = message as Stamped & { twist?: { linear?: object; angular?: object } };
    received('twist', COMMAND_TYPES.twist, msg, { twist: msg.twist ?? {} });
  });
  return node;
}
