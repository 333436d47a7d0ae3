import * as v from 'valibot';

const Iface = (name: string, type: string) =>
  v.optional(
    v.strictObject({
      name: v.pipe(
        v.string('expected an interface name'),
        v.regex(/^[~/]?[A-Za-z_][A-Za-z0-9_/]*$/, 'expected a ROS name'),
      ),
      type: v.optional(
        v.pipe(
          v.string(),
          v.regex(/^[A-Za-z0-9_]+\/(msg|srv|action)\/[A-Za-z0-9_]+$/, 'expected pkg/msg|srv|action/Type'),
        ),
        type,
      ),
    }),
    { name, type },
  );

const seconds = (fallback: number) =>
  v.optional(
    v.pipe(v.number('expected seconds'), v.finite(), v.gtValue(0, 'must be > 0'), v.maxValue(3600, 'at most 3600 s')),
    fallback,
  );

const SrdfSource = v.union(
  [
    v.strictObject({ file: v.string('expected a file reference') }),
    v.strictObject({
      node: v.pipe(v.string(), v.nonEmpty()),
      parameter: v.optional(v.string(), 'robot_description_semantic'),
    }),
  ],
  'expected {file: REF} or {node: NAME, parameter: NAME}',
);

/** Where the SRDF comes from: a file, or a string parameter of a running node. */
export type SrdfSource = v.InferOutput<typeof SrdfSource>;

/**
 * The endpoints file: the one place that names the ROS interfaces and their types. `tcp_link`
 * and `srdf` have no default here: they depend on the backend ({@link resolveEndpoints}).
 */
export const EndpointsFileSchema = v.strictObject({
  planning_group: v.optional(v.pipe(v.string(), v.nonEmpty()), 'iiwa_arm'),
  planning_frame: v.optional(v.pipe(v.string(), v.nonEmpty()), 'base_link'),
  tcp_link: v.optional(v.pipe(v.string(), v.nonEmpty())),
  joint_names: v.optional(
    v.pipe(v.array(v.pipe(v.string(), v.nonEmpty())), v.length(7, 'expected 7 joint names (J1..J7)')),
    ['joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6', 'joint7'],
  ),
  robot_description: v.optional(v.string('expected a file reference'), 'pkg://armgate/urdf/iiwa7.urdf'),
  srdf: v.optional(SrdfSource),
  /**
   * Jogging through MoveIt Servo (lib/ros/rcl-servo.ts): `auto` uses it when the servo node's command-type service
   * (`interfaces.servo_switch_command_type`) has a server at a jog's start; `off` always streams trajectories.
   */
  servo: v.optional(v.picklist(['auto', 'off'], 'expected "auto" or "off"'), 'auto'),
  interfaces: v.optional(
    v.strictObject({
      joint_states: Iface('/joint_states', 'sensor_msgs/msg/JointState'),
      compute_fk: Iface('/compute_fk', 'moveit_msgs/srv/GetPositionFK'),
      compute_ik: Iface('/compute_ik', 'moveit_msgs/srv/GetPositionIK'),
      move_to_joints: Iface('cobot/move_to_joints', 'iiwa_msgs/action/MoveToJoints'),
      move_to_pose: Iface('cobot/move_to_pose', 'iiwa_msgs/action/MoveToPose'),
      move_to_named: Iface('cobot/move_to_named', 'iiwa_msgs/srv/MoveToNamedPose'),
      trajectory: Iface('/iiwa_arm_controller/joint_trajectory', 'trajectory_msgs/msg/JointTrajectory'),
      follow_joint_trajectory: Iface(
        '/iiwa_arm_controller/follow_joint_trajectory',
        'control_msgs/action/FollowJointTrajectory',
      ),
      stop: Iface('cobot/stop', 'std_srvs/srv/Trigger'),
      apply_planning_scene: Iface('/apply_planning_scene', 'moveit_msgs/srv/ApplyPlanningScene'),
      plan_kinematic_path: Iface('/plan_kinematic_path', 'moveit_msgs/srv/GetMotionPlan'),
      servo_switch_command_type: Iface('/servo_node/switch_command_type', 'moveit_msgs/srv/ServoCommandType'),
      servo_joint_jog: Iface('/servo_node/delta_joint_cmds', 'control_msgs/msg/JointJog'),
      servo_twist: Iface('/servo_node/delta_twist_cmds', 'geometry_msgs/msg/TwistStamped'),
    }),
    {},
  ),
  timeouts: v.optional(
    v.strictObject({
      server_wait_s: seconds(5),
      fk_s: seconds(2),
      ik_s: seconds(1),
      plan_s: seconds(5),
      motion_s: seconds(120),
    }),
    {},
  ),
});

/** The endpoints file as written (tcp_link and srdf may be absent). */
export type EndpointsFileInput = v.InferOutput<typeof EndpointsFileSchema>;

/** The endpoints file in force: tcp_link and srdf filled in for the backend. */
export type EndpointsFile = Omit<EndpointsFileInput, 'tcp_link' | 'srdf'> & {
  readonly tcp_link: string;
  readonly srdf: SrdfSource;
};

/** The backends' defaults of what the endpoints file may leave out. */
export const BACKEND_DEFAULTS = {
  /** The simulator: the bundled model's flange and the bundled SRDF. */
  sim: { tcp_link: 'flange', srdf: { file: 'pkg://armgate/srdf/iiwa7.srdf' } },
  /**
   * A real stack (the lightweight-cobot stack): its TCP link `tcp` (base_link -> ... -> link_ee ->
   * tcp) and the SRDF move_group was started with, from its parameter.
   */
  ros2: { tcp_link: 'tcp', srdf: { node: '/move_group', parameter: 'robot_description_semantic' } },
} as const satisfies Record<'sim' | 'ros2', { tcp_link: string; srdf: SrdfSource }>;

/** The endpoints file with the backend's defaults for what it leaves out (tcp_link, srdf). */
export function resolveEndpoints(parsed: EndpointsFileInput, backend: 'sim' | 'ros2'): EndpointsFile {
  const defaults = BACKEND_DEFAULTS[backend];
  return { ...parsed, tcp_link: parsed.tcp_link ?? defaults.tcp_link, srdf: parsed.srdf ?? { ...defaults.srdf } };
}
