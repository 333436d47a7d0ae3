/**
 * The controller's trajectory topic on the rclnodejs context: its publisher (made at start-up, so that the controller
 * has matched it before the first trajectory), the trajectory armgate published there followed in plan time (pause,
 * resume, override), a stop's hold point, and until when what was sent last holds the arm (a trajectory goal's end
 * is noted here too: the controller executes one thing at a time).
 */
import { holdPoint, holdRestS } from './hold.ts';
import type { JointTrajectory } from '../planning/trajectory.ts';
import type { JointLimits } from '../robot/limits.ts';
import { err, ok, type Result } from '../result.ts';
import type { Clock } from '../clock.ts';
import type { InterfaceUnavailable, PublishOptions } from './context.ts';
import { jointTrajectoryToRos } from './convert.ts';
import type { EndpointsFile } from '../settings/endpoints.ts';
import { type JointTrajectoryMsg, type JointTrajectoryPointMsg, secondsOf } from './messages.ts';
import { isHoldPoint, messageOf, pathOf } from './plan-time.ts';
import { unavailable } from './rcl-calls.ts';
import { type RclJointStates, REST_STATE_MS } from './rcl-joint-states.ts';
import type { RclNode, RclPublisher } from './rclnodejs-api.ts';
import type { RetimedPath } from './retimed-path.ts';

/** What the channel needs of the context it is part of. */
export interface TrajectoryChannelPorts {
  readonly endpoints: EndpointsFile;
  readonly limits: JointLimits;
  readonly node: RclNode;
  readonly clock: Pick<Clock, 'nowMs'>;
  readonly jointStates: RclJointStates;
  /** Told of every trajectory published (`hold`: a hold point): a trajectory goal it replaces is over. */
  topicTrajectory(hold: boolean): void;
  /** The execution rate (0 paused, else the override). */
  rate(): number;
  log(line: string): void;
}

export class RclTrajectoryChannel {
  readonly #ports: TrajectoryChannelPorts;
  readonly #publisher: Result<RclPublisher, string>;
  /** The trajectory armgate published on the controller's topic, followed in plan time (pause, resume, override). */
  #path: RetimedPath | undefined;
  /** Until when (clock ms) the last trajectory sent (published, or a trajectory goal) holds the arm; 0: nothing. */
  endsAtMs = 0;
  /** The last published trajectory was a hold point (a stop): until endsAtMs the arm brakes. */
  holding = false;

  constructor(ports: TrajectoryChannelPorts) {
    this.#ports = ports;
    const { trajectory } = ports.endpoints.interfaces;
    let publisher: Result<RclPublisher, string>;
    try {
      publisher = ok(ports.node.createPublisher(trajectory.type, trajectory.name));
    } catch (e) {
      publisher = err((e as Error).message);
    }
    this.#publisher = publisher;
  }

  /** Why nothing can be published (the publisher could not be made), or undefined. */
  get broken(): string | undefined {
    return this.#publisher.ok
      ? undefined
      : `cannot publish on ${this.#ports.endpoints.interfaces.trajectory.name}: ${this.#publisher.error}`;
  }

  /**
   * A trajectory for the topic: an empty one is a hold point at the current state (the controller ignores empty
   * ones); any other is followed in plan time, and sent re-timed under an override below 100 % (a stop's hold
   * point is never followed, re-timed or refused).
   */
  publishTrajectory(msg: JointTrajectoryMsg, options: PublishOptions = {}): Result<void, InterfaceUnavailable> {
    const { name } = this.#ports.endpoints.interfaces.trajectory;
    if (!this.#publisher.ok) return err(unavailable(name, `cannot publish on ${name}: ${this.#publisher.error}`));
    if (msg.points.length === 0) {
      // ros2_controllers' JTC ignores an empty trajectory ("Empty trajectory received"): the arm would go
      // on. Stop and hold means a hold point at the current state, decelerating within the limits.
      const hold = this.holdAtCurrentState();
      if (!hold)
        return err(
          unavailable(
            name,
            `an empty trajectory stops nothing on ${name} (the controller ignores it) and there is no current joint state to hold at`,
          ),
        );
      this.#ports.log(
        `an empty trajectory: a hold point at the current state goes to ${name} instead (the controller ignores empty ones)`,
      );
      msg = { ...msg, joint_names: [...this.#ports.endpoints.joint_names], points: [hold] };
      this.#path = undefined;
      return this.publish(msg, true);
    } else {
      // Followed in plan time, so that a pause, a resume or the override can re-time its rest; under an
      // override below 100 % it goes out re-timed at once.
      // A stop's hold point (said by the stop, whatever its distance) is never followed, re-timed or refused.
      const hold = options.hold === true || this.isHoldPoint(msg);
      this.#path = hold ? undefined : this.pathOf(msg);
      if (!hold) {
        const timed = this.underOverride(msg, this.#path, name);
        if (!timed.ok) return timed;
        msg = timed.value;
      }
      return this.publish(msg, hold);
    }
  }

  /** A jog's message (no log line: 50 a second); it replaces what the controller had, followed or not. */
  publishJog(msg: JointTrajectoryMsg): Result<void, string> {
    const { name } = this.#ports.endpoints.interfaces.trajectory;
    if (!this.#publisher.ok) return err(`cannot publish on ${name}: ${this.#publisher.error}`);
    try {
      this.#publisher.value.publish(jointTrajectoryToRos(msg));
    } catch (e) {
      return err(`publishing on ${name} failed: ${(e as Error).message}`);
    }
    // The jog's trajectory replaces what the controller had: nothing published before is followed any more.
    this.#path = undefined;
    this.endsAtMs = 0;
    return ok(undefined);
  }

  /** The rest of the followed trajectory re-timed to `rate` from where it is (0: to rest on its path), published. */
  retimePath(path: RetimedPath, rate: number): Result<void, InterfaceUnavailable> {
    return this.publish(this.messageOf(path.retime(this.#ports.clock.nowMs(), rate)));
  }

  /**
   * Publishes on the controller's topic and notes until when the trajectory holds the arm; `hold`: it is a hold
   * point (a trajectory goal it replaces on the controller then ends there, and is not cancelled).
   */
  publish(msg: JointTrajectoryMsg, hold = false): Result<void, InterfaceUnavailable> {
    const { name } = this.#ports.endpoints.interfaces.trajectory;
    if (!this.#publisher.ok) return err(unavailable(name, `cannot publish on ${name}: ${this.#publisher.error}`));
    try {
      this.#publisher.value.publish(jointTrajectoryToRos(msg));
    } catch (e) {
      return err(unavailable(name, `publishing on ${name} failed: ${(e as Error).message}`));
    }
    this.#ports.topicTrajectory(hold);
    const last = msg.points.at(-1);
    const durationS = last ? secondsOf(last.time_from_start) : 0;
    // A hold point (what a stop publishes) holds the arm only while it brakes: at rest it is free at once.
    const state = this.#ports.jointStates.fresh();
    const holdS = state ? holdRestS(msg.points, state.position, state.velocity ?? []) : undefined;
    this.holding = holdS !== undefined;
    this.endsAtMs = msg.points.length === 0 ? 0 : this.#ports.clock.nowMs() + (holdS ?? durationS) * 1000;
    this.#ports.log(
      msg.points.length === 0
        ? `published an empty trajectory on ${name}: the controller stops and holds`
        : `published ${msg.points.length} point(s) (${durationS.toFixed(3)} s) on ${name}`,
    );
    if (this.subscriberCount(name) === 0)
      this.#ports.log(`no subscriber on ${name}: is the joint trajectory controller running?`);
    return ok(undefined);
  }

  /** The published trajectory still to be executed (paused, or before its end), if any. */
  activePath(): RetimedPath | undefined {
    const path = this.#path;
    if (!path) return undefined;
    if (path.finishedAt(this.#ports.clock.nowMs())) {
      this.#path = undefined;
      return undefined;
    }
    return path;
  }

  /** The controller replaces what it executes (a trajectory goal was sent): the published trajectory is gone. */
  forgetPath(): void {
    this.#path = undefined;
  }

  /**
   * The trajectory to send under the override in force: as it is at 100 %, else its path re-timed to the
   * override; never faster than the override: one that cannot be re-timed is refused (nothing is sent).
   */
  underOverride(
    msg: JointTrajectoryMsg,
    path: RetimedPath | undefined,
    iface: string,
  ): Result<JointTrajectoryMsg, InterfaceUnavailable> {
    const rate = this.#ports.rate();
    if (!(rate > 0 && rate < 1)) return ok(msg);
    if (!path)
      return err(
        unavailable(
          iface,
          `the speed override is ${Math.round(rate * 100)} % and this trajectory cannot be re-timed to it (a future header stamp, joints not named as the controller's, or no joint state of the last ${REST_STATE_MS} ms): nothing was sent`,
        ),
      );
    return ok(this.messageOf(path.retime(this.#ports.clock.nowMs(), rate)));
  }

  /** A hold point (what a stop publishes: one point where the arm is): no path to pause, never refused. */
  isHoldPoint(msg: JointTrajectoryMsg): boolean {
    return isHoldPoint(msg, this.#ports.jointStates.fresh());
  }

  /** The trajectory as the controller will follow it, from the current state (its t = 0), or undefined. */
  pathOf(msg: JointTrajectoryMsg): RetimedPath | undefined {
    const { endpoints, jointStates, limits, clock } = this.#ports;
    return pathOf(msg, endpoints.joint_names, jointStates.fresh(), limits, clock.nowMs());
  }

  /** A trajectory of the endpoints' joints as the controller's message (times from its receipt). */
  messageOf(trajectory: JointTrajectory): JointTrajectoryMsg {
    return messageOf(trajectory, this.#ports.endpoints.joint_names);
  }

  /** The hold point at the latest joint state (at most {@link REST_STATE_MS} old), or undefined without one. */
  private holdAtCurrentState(): JointTrajectoryPointMsg | undefined {
    const state = this.#ports.jointStates.fresh();
    return state ? holdPoint(state.position, state.velocity, this.#ports.limits) : undefined;
  }

  private subscriberCount(topic: string): number | undefined {
    try {
      return this.#ports.node.countSubscribers(topic);
    } catch {
      return undefined;
    }
  }
}
