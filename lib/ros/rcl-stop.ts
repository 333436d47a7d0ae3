/**
 * The stop on the rclnodejs context: the jog and a trajectory goal's request end, the motion goals in flight are
 * cancelled and the stack's stop service (a Trigger) is called at once; and the stop service alone (what stops a
 * named-pose call, which cannot be cancelled).
 */
import { err, ok, type Result } from '../result.ts';
import type { InterfaceUnavailable, StopCallOptions } from './context.ts';
import { triggerResponseFromRos } from './convert.ts';
import type { EndpointsFile } from '../settings/endpoints.ts';
import type { TriggerResponse } from './messages.ts';
import { type RclCalls, unavailable } from './rcl-calls.ts';
import type { RclGoals } from './rcl-goals.ts';
import type { RclJog } from './rcl-jog.ts';
import type { RclTrajectoryGoal } from './rcl-trajectory-goal.ts';

/** What the stop needs of the context it is part of. */
export interface StopPorts {
  readonly endpoints: EndpointsFile;
  readonly calls: RclCalls;
  readonly goals: RclGoals;
  readonly jogger: Pick<RclJog, 'halt'>;
  readonly trajectoryGoal: Pick<RclTrajectoryGoal, 'stop'>;
  log(line: string): void;
}

export class RclStop {
  private readonly endpoints: EndpointsFile;
  private readonly calls: RclCalls;
  private readonly goals: RclGoals;
  private readonly jogger: Pick<RclJog, 'halt'>;
  private readonly trajectoryGoal: Pick<RclTrajectoryGoal, 'stop'>;
  private readonly log: (line: string) => void;

  constructor(ports: StopPorts) {
    this.endpoints = ports.endpoints;
    this.calls = ports.calls;
    this.goals = ports.goals;
    this.jogger = ports.jogger;
    this.trajectoryGoal = ports.trajectoryGoal;
    this.log = (line) => ports.log(line);
  }

  /** The stack's stop service alone, waited for `serverWaitS` to appear (what stops a named-pose call too). */
  async callTrigger(serverWaitS: number): Promise<Result<TriggerResponse, InterfaceUnavailable>> {
    const iface = this.endpoints.interfaces.stop;
    const timeoutMs = this.endpoints.timeouts.server_wait_s * 1000;
    const answer = await this.calls.call(iface, 'stop service', {}, timeoutMs, serverWaitS);
    if (!answer.ok) return answer;
    const response = triggerResponseFromRos(answer.value);
    if (!response.ok)
      return err(unavailable(iface.name, `stop service ${iface.name} gave a malformed response: ${response.error}`));
    this.log(
      `stop service ${iface.name}: ${response.value.success ? 'success' : 'failure'}${response.value.message ? `: ${response.value.message}` : ''}`,
    );
    return response;
  }

  /**
   * Cancels the goals in flight and calls the stop service at once, and answers with the stop service's answer
   * (waited for server_wait_s to appear, unless `waitForServer` is false: the shutdown's stop). The servers'
   * confirmations of the cancels are not waited for: they come in the background, logged with their time (a cancel
   * not confirmed is logged as such), and each cancelled goal's own request answers once its cancel is confirmed.
   */
  async callStop(options: StopCallOptions = {}): Promise<Result<TriggerResponse, InterfaceUnavailable>> {
    // A paused trajectory goal waiting for its resume ends here too; no re-timed rest is sent after a stop.
    this.jogger.halt();
    this.trajectoryGoal.stop('stopped');
    // The stop service goes out in this turn, the cancels on the next (after the hold point, lib/ros/rcl-goals.ts):
    // each a round trip to the stack (about 2 to 20 ms over DDS on a loaded machine, the cancel's the longer), and
    // the answer waits for the stop service's alone.
    const t0 = performance.now();
    const since = () => (performance.now() - t0).toFixed(2);
    const { count: cancelled, confirmed } = this.goals.abortAll('stopped');
    if (cancelled > 0)
      void confirmed.then(() => this.log(`stop timings ms: cancels of ${cancelled} goal(s) confirmed ${since()}`));
    const trigger = await this.callTrigger(options.waitForServer === false ? 0 : this.endpoints.timeouts.server_wait_s);
    this.log(`stop timings ms: stop service answered ${since()}`);
    if (!trigger.ok || cancelled === 0) return trigger;
    return ok({
      success: trigger.value.success,
      message: `cancelled ${cancelled} motion goal(s); ${trigger.value.message}`,
    });
  }
}
