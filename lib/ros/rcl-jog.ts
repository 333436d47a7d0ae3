/**
 * Jogging on the ros2 backend (issue 34, item 7): armgate streams short joint trajectories to the controller's
 * joint_trajectory topic itself, computed every period by the same jog engine as the simulator's
 * (lib/motion/jog.ts: the same speeds, acceleration and position limits, envelope and dead-man). Where the stack runs
 * MoveIt Servo (the port's `servo`), a held jog goes to Servo instead (lib/ros/rcl-servo.ts), unless a safety
 * envelope is configured (Servo does not know it) or the jog is a bounded step (it must be exact).
 *
 * Each period's message is two points from receipt (header stamp 0): the engine's commanded state one period ahead
 * (positions and velocities), then the hold point that brakes from there to rest within the acceleration limits
 * (lib/ros/hold.ts). So every message ends at rest (joint_trajectory_controller refuses a trajectory that ends
 * moving), and if the stream stops (armgate stalls, a stop took over), the controller brakes the arm by itself.
 *
 * The engine steps from where the controller's commanded state is now: what the last message commands at this
 * moment (the controller interpolates from its commanded state: cubic between points with velocities), so a late
 * period finds the arm a little into its braking and ramps from there, within the limits. The jog starts from the
 * measured joint state. Its end (at rest in command) waits for joint states that say the arm rests, then is told.
 * Time is the port's clock (the process clock in production); the period is a timer on it.
 */
import type { Chain } from '../kinematics/chain.ts';
import { holdPoint } from './hold.ts';
import { type JogEndReason, JogEngine, type JogLimit, type JogSpeeds } from '../motion/jog.ts';
import { createSample, type JointSample } from '../planning/trajectory.ts';
import { err, ok, type Result } from '../result.ts';
import type { JointLimits } from '../robot/limits.ts';
import { createEnvelopeChecker, type Envelope } from '../safety/envelope.ts';
import type { Timer } from '../clock.ts';
import { RestWatch } from './at-rest.ts';
import { type ServoPort, ServoJog } from './rcl-servo.ts';
import type { ExecutionRateAnswer, JogEvent, JogRequest, JogStatus } from './context.ts';
import { durationFromS, type JointStateMsg, type JointTrajectoryMsg, secondsOf } from './messages.ts';

/** The control period of a jog on ros2 (ms): one message on the controller's topic each. */
export const JOG_PERIOD_MS = 20;
/** Control periods of the engine in one message (its points: 4 ms apart, as the simulator's drives step finely). */
const SUBSTEPS = 5;
/** How long (ms) the end of a jog waits for joint states that say the arm rests before it is told anyway. */
const SETTLE_WAIT_MS = 2000;

/** What the jog needs of the rclnodejs context. */
export interface RclJogPort {
  readonly limits: JointLimits;
  readonly jointNames: readonly string[];
  /** Wall clock (ms). */
  nowMs(): number;
  /** Runs `fn` once, `ms` from now, on the same clock (the jog's period). */
  after(ms: number, fn: () => void): Timer;
  /** The latest joint state in J1..J7 order if fresh, else undefined. */
  state(): JointStateMsg | undefined;
  /** The next joint state (J1..J7 order) within `timeoutMs`, else undefined. */
  nextState(timeoutMs: number): Promise<JointStateMsg | undefined>;
  /** Publishes on the controller's trajectory topic (no log line: 50 a second). */
  publish(msg: JointTrajectoryMsg): Result<void, string>;
  /** The execution rate: 0 paused, else the override (0..1]. */
  rate(): number;
  /** A line for the trajectory log. */
  log(line: string): void;
  /** MoveIt Servo's interfaces when the endpoints file allows it (`servo: auto`), with the frames of a twist. */
  readonly servo?:
    | { readonly port: ServoPort; readonly frames: { readonly base: string; readonly tool: string } }
    | undefined;
}

/** What the last message commands: cubics through `knots` (the state it started from first) at `times` (s). */
export interface Sent {
  readonly atMs: number;
  readonly knots: readonly JointSample[];
  readonly times: readonly number[];
}

/** The jog of one arm on ros2 (see the module comment). */
export class RclJog {
  private readonly port: RclJogPort;
  private engine: JogEngine;
  private readonly n: number;
  private readonly basis: JointSample;
  private readonly out: JointSample;
  private sent: Sent | undefined;
  private timer: Timer | undefined;
  /** A jog is in force: streaming, or at rest in command and waiting for the arm to settle. */
  private inForce = false;
  /** Counts jogs and their phases: a settle wait that sees it change was superseded. */
  private generation = 0;
  private moving = false;
  private readonly listeners = new Set<(event: JogEvent) => void>();
  /** Cartesian jogs need the TCP chain of the robot description. */
  private cartesian: boolean;

  private readonly speeds: JogSpeeds;
  /** Jogs through MoveIt Servo (when the port has it); `viaServo`: the jog in force goes there. */
  private readonly servo: ServoJog | undefined;
  private viaServo = false;
  /** A safety envelope is configured: Servo does not know it, so jogs keep the trajectory path. */
  private enveloped = false;

  /** Why no jog may start yet (the envelope's TCP chain is not known yet), if so. */
  private blocked: string | undefined;

  /**
   * `safety`: the TCP chain (Cartesian jogs and the envelope) and the safety envelope if one is configured, or why
   * they are not known yet (no jog starts until {@link useSafety}).
   */
  constructor(
    port: RclJogPort,
    speeds: JogSpeeds,
    safety: Result<{ readonly chain: Chain; readonly envelope: Envelope | undefined }, string>,
  ) {
    this.port = port;
    this.speeds = speeds;
    this.n = port.jointNames.length;
    this.basis = createSample(this.n);
    this.out = createSample(this.n);
    this.cartesian = false;
    const chain = safety.ok ? safety.value.chain : emptyChain();
    this.engine = this.engineFor(chain, safety.ok ? safety.value.envelope : undefined);
    this.blocked = safety.ok ? undefined : safety.error;
    this.enveloped = safety.ok && safety.value.envelope !== undefined;
    const servo = port.servo;
    this.servo = servo
      ? new ServoJog(servo.port, { ...port, frames: servo.frames }, speeds, (event) => this.emit(event))
      : undefined;
  }

  /** The envelope or the TCP chain changed (read from the stack's robot_description): the next jog holds to it. */
  useSafety(chain: Chain, envelope: Envelope | undefined): void {
    this.engine = this.engineFor(chain, envelope);
    this.blocked = undefined;
    this.enveloped = envelope !== undefined;
  }

  /**
   * The engine on `chain` with the envelope (the workspace box and the keep-out boxes against the links). There is
   * no collision model on ros2 (the simulator's self and floor check): MoveIt checks collisions of planned motions
   * only.
   */
  private engineFor(chain: Chain, envelope: Envelope | undefined): JogEngine {
    this.cartesian = chain.jointNames.length === this.n;
    const guards = envelope && this.cartesian ? { envelope: createEnvelopeChecker(chain, envelope) } : {};
    return new JogEngine(chain, this.port.limits, this.speeds, guards);
  }

  /** A jog is in force (moving, braking, or held at rest by a command). */
  active(): boolean {
    return this.inForce || (this.servo?.active() ?? false);
  }

  /** Starts or extends a jog (see RobotContext.jog). */
  jog(request: JogRequest): Result<void, string> {
    if (this.servo && !this.inForce) {
      if (!this.servo.active()) {
        this.viaServo = !this.enveloped && !this.blocked && this.servo.takes(request);
        if (this.viaServo) this.port.log('jog: through MoveIt Servo (its command-type service is on the graph)');
      }
      if (this.viaServo) return this.servo.jog(request);
    }
    if (request.continuing && !this.inForce) return err('the jog in force ended before this command');
    if (this.blocked && !this.inForce) return err(`no jog before the safety envelope holds: ${this.blocked}`);
    if (request.target.kind === 'cartesian' && !this.cartesian)
      return err('a Cartesian jog needs the TCP chain of the robot description, which this backend could not build');
    const nowS = this.port.nowMs() / 1000;
    const untilS = request.goal ? Number.POSITIVE_INFINITY : nowS + request.ttlS;
    if (!this.inForce) {
      const state = this.port.state();
      if (!state) return err('no current joint state to jog from: is the controller running?');
      this.basis.q.set(state.position);
      this.basis.qd.fill(0);
      for (let j = 0; j < this.n; j++) {
        const v = state.velocity[j] ?? 0;
        this.basis.qd[j] = Number.isFinite(v) && state.velocity.length === this.n ? v : 0;
      }
      this.sent = undefined;
      this.moving = false;
      this.inForce = true;
      this.engine.reset();
      this.emit({ state: 'started', positions: Array.from(state.position) });
      this.port.log(
        `jog started: short trajectories every ${JOG_PERIOD_MS} ms on the controller's topic, each ending at rest`,
      );
    }
    this.engine.take(request.target, untilS, this.basisNow(), request.goal);
    this.generation++;
    if (!this.timer) this.tick();
    return ok(undefined);
  }

  /** Brakes the jog in force to rest and ends it with `reason`. */
  release(reason: JogEndReason): void {
    this.servo?.release(reason);
    if (this.inForce) this.engine.release(reason);
  }

  /**
   * A stop takes the arm: nothing more is published from now on (the stop's hold point brakes the arm; the last
   * message ends at rest too), and the jog ends as stopped.
   */
  halt(): void {
    this.servo?.halt();
    if (!this.inForce) return;
    this.clearTimer();
    this.engine.reset();
    this.generation++;
    this.inForce = false;
    this.sent = undefined;
    this.port.log('jog ended by a stop: nothing more streams; the stop holds the arm');
    // Told on the next turn: the stop that revoked the jog's lease is still running its revocations.
    const positions = this.positions();
    setImmediate(() => this.emit({ state: 'ended', reason: 'stop', positions }));
  }

  /** What the jog does now. */
  status(): JogStatus {
    if (this.servo?.active()) return this.servo.status();
    return {
      jogging: this.inForce,
      moving: this.inForce && this.moving,
      positions: this.positions(),
      limit: (this.inForce ? this.engine.limit() : undefined) ?? null,
    };
  }

  /** Subscribes to the jog's moments; returns the unsubscribe. */
  onEvents(listener: (event: JogEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A pause (rate 0) or a new override while jogging: a pause answers once the jog's command is at rest. */
  async rateChanged(rate: number, signal: AbortSignal | undefined): Promise<ExecutionRateAnswer> {
    if (rate > 0) return { executing: true, message: `the jog runs at ${Math.round(rate * 100)} % of its speed` };
    const rested =
      !(this.moving || this.servo?.status().moving) ||
      (await new Promise<boolean>((resolve) => {
        const done = (value: boolean) => {
          unsubscribe();
          signal?.removeEventListener('abort', aborted);
          resolve(value);
        };
        const aborted = () => done(false);
        const unsubscribe = this.onEvents((event) => {
          if (event.state === 'resting') done(true);
          else if (event.state === 'ended') done(false);
        });
        if (signal?.aborted) aborted();
        else signal?.addEventListener('abort', aborted, { once: true });
      }));
    return {
      executing: rested && this.active(),
      message: rested ? 'the jog came to rest and holds there' : 'the jog ended before it came to rest',
    };
  }

  /** Ends everything at shutdown (no event: nobody listens any more). */
  close(): void {
    this.servo?.close();
    this.clearTimer();
    this.inForce = false;
    this.generation++;
  }

  private clearTimer(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  private emit(event: JogEvent): void {
    for (const listener of [...this.listeners]) listener(event);
  }

  /** Measured positions if fresh, else where the command is. */
  private positions(): number[] {
    const state = this.port.state();
    return state ? Array.from(state.position) : Array.from(this.basis.q);
  }

  /** The controller's commanded state now (what the last message commands at this moment), in `basis`. */
  private basisNow(): Float64Array {
    const sent = this.sent;
    if (sent) commandedAt(sent, (this.port.nowMs() - sent.atMs) / 1000, this.basis);
    return this.basis.q;
  }

  /**
   * One period: the engine steps from the commanded state in {@link SUBSTEPS} control periods (its own output the
   * next one's state, as the simulator's drives follow it), the message with each of them as a point goes out, and
   * the next period is timed.
   */
  private tick(): void {
    this.timer = undefined;
    if (!this.inForce) return;
    const nowMs = this.port.nowMs();
    this.basisNow();
    const dtS = JOG_PERIOD_MS / 1000 / SUBSTEPS;
    const rate = this.port.rate();
    const state = createSample(this.n);
    state.q.set(this.basis.q);
    state.qd.set(this.basis.qd);
    const points: JointSample[] = [];
    let ended: { reason: JogEndReason; limit: JogLimit | undefined } | undefined;
    let moving = false;
    for (let k = 0; k < SUBSTEPS && !ended; k++) {
      const report = this.engine.step(state, nowMs / 1000 + k * dtS, dtS, rate, this.out);
      const point = createSample(this.n);
      point.q.set(this.out.q);
      point.qd.set(this.out.qd);
      points.push(point);
      state.q.set(this.out.q);
      state.qd.set(this.out.qd);
      moving = report.moving;
      if (report.ended) ended = { reason: report.ended, limit: report.limit };
    }
    if (!this.publish(nowMs, points, dtS)) return;
    this.setMoving(moving && !ended);
    if (ended) {
      // At rest in command: it holds there; the end is told once the arm is seen at rest.
      void this.settle(ended.reason, ended.limit);
      return;
    }
    this.timer = this.port.after(JOG_PERIOD_MS, () => this.tick());
  }

  private setMoving(moving: boolean): void {
    if (moving === this.moving) return;
    this.moving = moving;
    this.emit({ state: moving ? 'moving' : 'resting', positions: this.positions() });
  }

  /**
   * The message of one period: `points` every `dtS` from receipt, then the hold point that brakes from the last to
   * rest (none when the last is at rest). False when it could not go out (the jog has ended then).
   */
  private publish(nowMs: number, points: readonly JointSample[], dtS: number): boolean {
    const last = points.at(-1) ?? this.basis;
    const resting = last.qd.every((v) => v === 0);
    const hold = resting
      ? undefined
      : holdPoint(Array.from(last.q), Array.from(last.qd), this.port.limits, { minTimeS: dtS });
    const tailS = hold ? secondsOf(hold.time_from_start) : 0;
    const point = (q: ArrayLike<number>, qd: ArrayLike<number>, atS: number) => ({
      positions: Array.from(q),
      velocities: Array.from(qd),
      accelerations: [],
      effort: [],
      time_from_start: durationFromS(atS),
    });
    const endS = points.length * dtS;
    const msg: JointTrajectoryMsg = {
      header: { stamp: { sec: 0, nanosec: 0 }, frame_id: '' },
      joint_names: [...this.port.jointNames],
      points: [
        ...points.map((p, k) => point(p.q, p.qd, (k + 1) * dtS)),
        ...(hold ? [point(hold.positions, hold.velocities, endS + tailS)] : []),
      ],
    };
    const published = this.port.publish(msg);
    if (!published.ok) {
      // Nothing reaches the controller: the jog cannot go on (the last message that did ends at rest).
      this.port.log(`jog: ${published.error}; the jog ends`);
      this.clearTimer();
      this.inForce = false;
      this.generation++;
      const positions = this.positions();
      // Told on the next turn: this may run inside the command that starts the jog.
      setImmediate(() => this.emit({ state: 'ended', reason: 'limit', positions }));
      return false;
    }
    const from = createSample(this.n);
    from.q.set(this.basis.q);
    from.qd.set(this.basis.qd);
    const knots = [from, ...points];
    const times = knots.map((_, k) => k * dtS);
    if (hold) {
      const rest = createSample(this.n);
      rest.q.set(hold.positions);
      knots.push(rest);
      times.push(endS + tailS);
    }
    this.sent = { atMs: nowMs, knots, times };
    return true;
  }

  /** The end of a jog whose command is at rest: told once joint states say the arm rests (or after a while). */
  private async settle(reason: JogEndReason, limit: JogLimit | undefined): Promise<void> {
    const generation = ++this.generation;
    const deadline = this.port.nowMs() + SETTLE_WAIT_MS;
    const rest = new RestWatch();
    let rested = false;
    while (!rested && this.port.nowMs() < deadline) {
      const msg = await this.port.nextState(200);
      if (generation !== this.generation) return;
      if (msg) rested = rest.observe(this.port.nowMs(), msg.position, msg.velocity);
    }
    if (generation !== this.generation || !this.inForce) return;
    this.inForce = false;
    this.sent = undefined;
    const positions = this.positions();
    this.port.log(
      `jog ended (${reason}) at [${positions.map((q) => q.toFixed(4)).join(', ')}]${rested ? '' : '; not seen at rest within 2 s'}`,
    );
    this.emit({ state: 'ended', reason, positions, ...(limit ? { limit } : {}) });
  }
}

function emptyChain(): Chain {
  return {
    jointNames: [],
    originPos: new Float64Array(0),
    originRot: new Float64Array(0),
    axis: new Float64Array(0),
    tipPos: new Float64Array(3),
    tipRot: new Float64Array(9),
  };
}

/**
 * The state a message commands `tS` after its receipt, as the controller interpolates it: cubics (Hermite) between
 * its knots, the last one held after its time. Pure.
 */
export function commandedAt(sent: Sent, tS: number, out: JointSample): void {
  const { knots, times } = sent;
  let k = 1;
  while (k < knots.length - 1 && tS > (times[k] ?? 0)) k++;
  const a = knots[k - 1];
  const b = knots[k];
  if (!a || !b || tS >= (times.at(-1) ?? 0)) {
    const end = knots.at(-1);
    if (end) {
      out.q.set(end.q);
      out.qd.set(end.qd);
    }
    return;
  }
  const h = (times[k] ?? 0) - (times[k - 1] ?? 0);
  const t = Math.max(0, tS - (times[k - 1] ?? 0));
  for (let j = 0; j < out.q.length; j++) hermite(a.q[j] ?? 0, a.qd[j] ?? 0, b.q[j] ?? 0, b.qd[j] ?? 0, h, t, out, j);
}

/** Position and velocity at `t` of the cubic from (q0, v0) to (q1, v1) in `h`, into joint `j` of `out`. */
function hermite(q0: number, v0: number, q1: number, v1: number, h: number, t: number, out: JointSample, j: number) {
  if (h <= 0) {
    out.q[j] = q1;
    out.qd[j] = v1;
    return;
  }
  const s = Math.min(1, t / h);
  const s2 = s * s;
  const s3 = s2 * s;
  const h00 = 2 * s3 - 3 * s2 + 1;
  const h10 = s3 - 2 * s2 + s;
  const h01 = -2 * s3 + 3 * s2;
  const h11 = s3 - s2;
  out.q[j] = h00 * q0 + h10 * h * v0 + h01 * q1 + h11 * h * v1;
  const d00 = 6 * s2 - 6 * s;
  const d10 = 3 * s2 - 4 * s + 1;
  const d01 = -6 * s2 + 6 * s;
  const d11 = 3 * s2 - 2 * s;
  out.qd[j] = (d00 * q0 + d01 * q1) / h + d10 * v0 + d11 * v1;
}
