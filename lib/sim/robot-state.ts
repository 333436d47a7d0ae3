/**
 * What robot_state_publisher offers on a real stack, for the simulated arm: the robot description
 * on /robot_description (std_msgs/msg/String, transient local), the fixed joints on /tf_static and
 * the movable joints of each joint state on /tf (tf2_msgs/msg/TFMessage), from the URDF the
 * simulator and the live page use. A bag recorded from these shows the arm in Foxglove's 3D panel.
 */
import {
  fixedTransforms,
  type LinkTransform,
  movingTransforms,
  treeFromUrdf,
  type TreeJoint,
} from '../kinematics/urdf-tree.ts';
import type { TopicInfo } from '../ros/context.ts';
import type { JointStateMsg, TimeMsg } from '../ros/messages.ts';

/** The topics robot_state_publisher and tf2 use (their default names), with the durability each is offered with. */
export const ROBOT_STATE_TOPICS = {
  robot_description: { name: '/robot_description', type: 'std_msgs/msg/String', durability: 'transient_local' },
  tf_static: { name: '/tf_static', type: 'tf2_msgs/msg/TFMessage', durability: 'transient_local' },
  tf: { name: '/tf', type: 'tf2_msgs/msg/TFMessage', durability: 'volatile' },
} as const satisfies Record<string, TopicInfo>;

/** geometry_msgs/msg/TransformStamped as a plain object. */
interface TransformStampedMsg {
  readonly header: { readonly stamp: TimeMsg; readonly frame_id: string };
  readonly child_frame_id: string;
  readonly transform: {
    readonly translation: LinkTransform['translation'];
    readonly rotation: LinkTransform['rotation'];
  };
}

/** tf2_msgs/msg/TFMessage as a plain object. */
export interface TfMessage {
  readonly transforms: readonly TransformStampedMsg[];
}

function stamped(transforms: readonly LinkTransform[], stamp: TimeMsg): TfMessage {
  return {
    transforms: transforms.map((t) => ({
      header: { stamp, frame_id: t.parent },
      child_frame_id: t.child,
      transform: { translation: t.translation, rotation: t.rotation },
    })),
  };
}

/** The robot_state_publisher messages of one robot description. */
export class RobotStateMessages {
  readonly description: { readonly data: string };
  readonly #joints: readonly TreeJoint[];

  /** Throws when the URDF cannot be read (the simulator's model loaded it already, so a bug). */
  constructor(urdf: string) {
    const tree = treeFromUrdf(urdf);
    if (!tree.ok) throw new Error(`robot description: ${tree.error}`);
    this.#joints = tree.value;
    this.description = { data: urdf };
  }

  /** The fixed joints' transforms, stamped `stamp` (sent once, latched). */
  tfStatic(stamp: TimeMsg): TfMessage {
    return stamped(fixedTransforms(this.#joints), stamp);
  }

  /** The movable joints' transforms at a joint state, stamped as the state. */
  tf(state: JointStateMsg): TfMessage {
    const index = new Map(state.name.map((name, i) => [name, i]));
    return stamped(
      movingTransforms(this.#joints, (joint) => {
        const i = index.get(joint);
        return i === undefined ? undefined : state.position[i];
      }),
      state.header.stamp,
    );
  }
}
