/**
 * Pause, resume and the speed override on the ros2 backend (issue 24): the execution rate the rclnodejs context's
 * goals, trajectories and jog run at, and how a change of it reaches what executes.
 */
import { err, ok, type Result } from '../result.ts';
import type { ArmActivity, ExecutionRateAnswer, ExecutionRateOptions, InterfaceUnavailable } from './context.ts';
import type { EndpointsFile } from '../settings/endpoints.ts';
import { unavailable } from './rcl-calls.ts';
import type { RclGoals } from './rcl-goals.ts';
import type { RclJog } from './rcl-jog.ts';
import type { RclJointStates } from './rcl-joint-states.ts';
import type { RclTrajectoryChannel } from './rcl-trajectory-channel.ts';
import type { RclTrajectoryGoal } from './rcl-trajectory-goal.ts';

/** What the execution rate needs of the context it is part of. */
export interface ExecutionRatePorts {
  readonly endpoints: EndpointsFile;
  readonly goals: RclGoals;
  readonly channel: RclTrajectoryChannel;
  readonly trajectoryGoal: RclTrajectoryGoal;
  readonly jointStates: RclJointStates;
  readonly jogger: RclJog;
  armActivity(): ArmActivity | undefined;
  log(line: string): void;
}

export class RclExecutionRate {
  readonly #ports: ExecutionRatePorts;
  /** The execution rate (0..1): the speed override scales the speed of the goals sent (0 while paused). */
  #rate = 1;

  constructor(ports: ExecutionRatePorts) {
    this.#ports = ports;
  }

  /** The rate in force: 0 paused, else the override (0..1]. */
  get value(): number {
    return this.#rate;
  }

  /** A goal with its speed scaled by the override in force (a paused goal is sent again at the rate of its resume). */
  scaled<G extends { readonly speed: number }>(goal: G): G {
    return this.#rate > 0 && this.#rate < 1 ? { ...goal, speed: goal.speed * this.#rate } : goal;
  }

  /**
   * The stack plans and executes a motion goal itself and Jazzy's joint trajectory controller has no speed
   * scaling, so: rate 0 (pause) cancels the motion goals in flight (the stack brakes; a named-pose call: the stop
   * service) and answers once the arm rests; their requests wait, and a rate above 0 (resume) sends
   * the same goals again from where the arm rests (the stack plans again: the path may differ). A
   * rate below 1 (the override) scales the speed of every goal sent from then on; a goal in progress
   * keeps its own. A trajectory armgate published or sent as a FollowJointTrajectory goal is followed
   * in plan time and its rest re-timed here on the same path (lib/ros/retimed-path.ts). A sequence
   * runner's goals (sent by the runner's own node) are paused by the runner itself, told over IPC
   * before this is called (lib/control/pause.ts waits for its acknowledgement). What cannot be paused
   * (a trajectory with a future header stamp) is a 503, and POST /stop stops it.
   */
  async set(
    rate: number,
    options: ExecutionRateOptions = {},
  ): Promise<Result<ExecutionRateAnswer, InterfaceUnavailable>> {
    const { goals, channel, trajectoryGoal, jogger } = this.#ports;
    const log = (line: string) => this.#ports.log(line);
    const percent = Math.round(rate * 100);
    if (jogger.active()) {
      // A jog: the engine takes the rate every period (0: it brakes to rest and holds while commanded).
      this.#rate = Math.min(1, Math.max(0, rate));
      return ok(await jogger.rateChanged(this.#rate, options.signal));
    }
    const path = channel.activePath();
    if (rate > 0) {
      this.#rate = Math.min(1, rate);
      const resumed = goals.resumeMotions();
      if (resumed > 0) log(`resume: ${resumed} paused goal(s) sent again at ${percent} % of their speed`);
      const run = trajectoryGoal.active();
      if (run) {
        trajectoryGoal.retime(run, this.#rate);
        log(`the trajectory goal in progress re-timed to ${percent} % from where it is (a new goal)`);
        return ok({ executing: true, message: `the trajectory in progress runs at ${percent} %` });
      }
      if (path) {
        // The rest of the published trajectory, re-timed from where it is (at rest when paused) to this rate.
        const published = channel.retimePath(path, this.#rate);
        if (!published.ok) return published;
        log(`the trajectory in progress re-timed to ${percent} % from where it is`);
        return ok({ executing: true, message: `the trajectory in progress runs at ${percent} %` });
      }
      return ok({
        executing: resumed > 0 || goals.motions > 0,
        message:
          resumed > 0
            ? `${resumed} paused goal(s) sent again at ${percent} % of their speed (the stack plans again from where the arm rests)`
            : `goals sent from now on run at ${percent} % of their speed (a goal in progress keeps its own)`,
      });
    }
    const run = trajectoryGoal.active();
    if (run && options.holder?.kind !== 'sequence') {
      this.#rate = 0;
      trajectoryGoal.retime(run, 0);
      return ok(
        await this.restAnswer(
          options.signal,
          `pause: the trajectory goal brakes on its path (a new goal)`,
          'the trajectory came to rest on its path and holds there',
          'the trajectory was re-timed to rest on its path; no joint state at rest was seen within the motion timeout',
        ),
      );
    }
    if (path && options.holder?.kind !== 'sequence') {
      this.#rate = 0;
      // The rest of the published trajectory re-timed to come to rest on its path within the limits.
      const published = channel.retimePath(path, 0);
      if (!published.ok) return published;
      return ok(
        await this.restAnswer(
          options.signal,
          `pause: the trajectory on the topic brakes on its path`,
          'the trajectory came to rest on its path and holds there',
          'the trajectory was re-timed to rest on its path; no joint state at rest was seen within the motion timeout',
        ),
      );
    }
    if (options.holder?.kind === 'sequence' && options.pausedElsewhere) {
      // The runner cancelled its goal on the stack (it brakes) and waits for the resume.
      this.#rate = 0;
      return ok(
        await this.restAnswer(
          options.signal,
          `pause: the sequence runner's goal cancelled on the stack`,
          "the sequence runner's goal was cancelled on the stack, which brought the arm to rest; resume sends it again",
          "the sequence runner's goal was cancelled on the stack; no joint state at rest was seen within the motion timeout",
        ),
      );
    }
    const activity = options.holder?.kind === 'sequence' ? options.holder : this.#ports.armActivity();
    if (goals.motions === 0 && activity) {
      const what = activity.kind === 'stopping' ? 'the arm braking after a stop' : activity.detail;
      return err(
        unavailable(
          this.#ports.endpoints.interfaces.trajectory.name,
          `pause on the ros2 backend holds armgate's motion goals only; ${what} cannot be paused on its path here (the controller has no speed scaling): POST /stop stops it`,
        ),
      );
    }
    this.#rate = 0;
    // Goals sent from now on (a move between its checks and its goal) wait for the resume before they go.
    const paused = await goals.pauseMotions();
    if (paused === 0 && goals.paused === 0) return ok({ executing: false, message: 'no motion goal executes' });
    const answer = await this.restAnswer(
      options.signal,
      `pause: ${paused} motion goal(s) cancelled on the stack`,
      'the motion goal was cancelled on the stack, which brought the arm to rest; resume sends it again',
      'the motion goal was cancelled on the stack; no joint state at rest was seen within the motion timeout',
    );
    return ok({ ...answer, executing: goals.paused > 0 });
  }

  /**
   * A pause's answer once the arm rests (at most timeouts.motion_s, or until `signal`): logged with `what`, the
   * message as it came out.
   */
  private async restAnswer(
    signal: AbortSignal | undefined,
    what: string,
    rested: string,
    unseen: string,
  ): Promise<ExecutionRateAnswer> {
    const atRest = await this.#ports.jointStates.waitAtRest(this.#ports.endpoints.timeouts.motion_s * 1000, signal);
    this.#ports.log(`${what}; ${atRest ? 'the arm rests' : 'not seen at rest'}`);
    return { executing: true, message: atRest ? rested : unseen };
  }
}
