/**
 * Jogging through MoveIt Servo on the ros2 backend (issue 34, item 7), where the stack runs a servo node: armgate
 * sends it velocity commands instead of streaming trajectories to the controller (lib/ros/rcl-jog.ts does that
 * otherwise). MoveIt 2 Jazzy's servo_node offers, under its node name (`/servo_node` by default):
 * - `~/switch_command_type` (moveit_msgs/srv/ServoCommandType: JOINT_JOG 0, TWIST 1, POSE 2): what it listens to;
 * - `~/delta_joint_cmds` (control_msgs/msg/JointJog): joint velocities (rad/s);
 * - `~/delta_twist_cmds` (geometry_msgs/msg/TwistStamped): a TCP twist (m/s, rad/s) in the header's frame.
 * The names are the endpoints file's `interfaces.servo_*`; `servo: auto` (the default) uses Servo when its
 * command-type service has a server at a jog's start, `off` never.
 *
 * A joint jog sends JointJog (each joint's velocity: its fraction x joint_speed x its velocity limit x the override);
 * a Cartesian jog sends TwistStamped in the planning frame (`base`) or the TCP link (`tool`) (fractions x tcp_speed,
 * tcp_angular_speed, x the override). Each is stamped with the node's clock (Servo drops commands older than its
 * `incoming_command_timeout`, 0.1 s by default) and sent every {@link SERVO_PERIOD_MS} while the newest command holds
 * (its ttl); the command type is switched first (once, until the kind of jog changes). After the ttl (or a release,
 * or a pause) one zero command goes out and nothing more: Servo halts on stale commands by itself, armgate stops
 * explicitly too. Servo applies its own limits (joint position and velocity limits, singularity and collision
 * checks, its smoothing); armgate's safety envelope is not known to it, so with an envelope configured the jog keeps
 * the trajectory path (see RclJog). A bounded step (the MCP tool) keeps the trajectory path too: it must be exact.
 */
import type { Timer } from '../clock.ts';
import type { JogEndReason, JogSpeeds, JogTarget } from '../motion/jog.ts';
import { err, ok, type Result } from '../result.ts';
import type { JointLimits } from '../robot/limits.ts';
import { RestWatch } from './at-rest.ts';
import type { JogEvent, JogRequest, JogStatus } from './context.ts';
import type { JointStateMsg } from './messages.ts';
import type { RclClient, RclNode, RclPublisher } from './rclnodejs-api.ts';

/** How often (ms) a command goes to Servo while a jog holds. */
export const SERVO_PERIOD_MS = 20;
/** How long (ms) the end of a jog waits for joint states that say the arm rests before it is told anyway. */
const SETTLE_WAIT_MS = 2000;

/** ServoCommandType's command types (moveit_msgs/srv/ServoCommandType). */
export const SERVO_COMMAND = { jointJog: 0, twist: 1 } as const;
export type ServoCommandKind = (typeof SERVO_COMMAND)[keyof typeof SERVO_COMMAND];

/** A time of the node's clock (builtin_interfaces/msg/Time). */
export interface Stamp {
  readonly sec: number;
  readonly nanosec: number;
}

/** control_msgs/msg/JointJog as sent. */
export interface JointJogMsg {
  readonly header: { readonly stamp: Stamp; readonly frame_id: string };
  readonly joint_names: string[];
  readonly displacements: number[];
  readonly velocities: number[];
  readonly duration: number;
}

/** geometry_msgs/msg/TwistStamped as sent. */
export interface TwistStampedMsg {
  readonly header: { readonly stamp: Stamp; readonly frame_id: string };
  readonly twist: {
    readonly linear: { readonly x: number; readonly y: number; readonly z: number };
    readonly angular: { readonly x: number; readonly y: number; readonly z: number };
  };
}

/** What the Servo path needs of the ROS graph (lib/ros/rcl-context.ts builds it on its node). */
export interface ServoPort {
  /** The servo node's command-type service has a server now. */
  present(): boolean;
  /** Asks Servo to listen to `kind`; resolves with its answer (false: refused or no answer in time). */
  switchCommandType(kind: ServoCommandKind): Promise<boolean>;
  publishJointJog(msg: JointJogMsg): Result<void, string>;
  publishTwist(msg: TwistStampedMsg): Result<void, string>;
  /** The node's clock now. */
  stamp(): Stamp;
}

/** What the Servo jog needs of the rest of the context (a subset of RclJogPort). */
export interface ServoJogHost {
  readonly limits: JointLimits;
  readonly jointNames: readonly string[];
  /** The frames of a Cartesian jog: `base` and `tool`. */
  readonly frames: { readonly base: string; readonly tool: string };
  nowMs(): number;
  /** Runs `fn` once, `ms` from now, on the clock of `nowMs` (the period of the commands). */
  after(ms: number, fn: () => void): Timer;
  state(): JointStateMsg | undefined;
  nextState(timeoutMs: number): Promise<JointStateMsg | undefined>;
  rate(): number;
  log(line: string): void;
}

/** The command of one period for `target`: pure. */
export function servoCommand(
  target: JogTarget,
  speeds: JogSpeeds,
  limits: JointLimits,
  jointNames: readonly string[],
  frames: { readonly base: string; readonly tool: string },
  rate: number,
  stamp: Stamp,
): { kind: 'joints'; msg: JointJogMsg } | { kind: 'twist'; msg: TwistStampedMsg } {
  const clamp = (x: number | undefined) => (Number.isFinite(x) ? Math.max(-1, Math.min(1, x ?? 0)) : 0);
  const r = Math.max(0, Math.min(1, rate));
  if (target.kind === 'joints') {
    return {
      kind: 'joints',
      msg: {
        header: { stamp, frame_id: '' },
        joint_names: [...jointNames],
        displacements: [],
        velocities: jointNames.map(
          (_, j) => clamp(target.fractions[j]) * speeds.jointSpeed * (limits.maxVelRadS[j] ?? 0) * r,
        ),
        duration: 0,
      },
    };
  }
  const lin = (i: number) => clamp(target.linear[i]) * speeds.tcpSpeedMS * r;
  const ang = (i: number) => clamp(target.angular[i]) * speeds.tcpAngularSpeedRadS * r;
  return {
    kind: 'twist',
    msg: {
      header: { stamp, frame_id: target.frame === 'tool' ? frames.tool : frames.base },
      twist: { linear: { x: lin(0), y: lin(1), z: lin(2) }, angular: { x: ang(0), y: ang(1), z: ang(2) } },
    },
  };
}

const ZERO_TARGET = (target: JogTarget): JogTarget =>
  target.kind === 'joints'
    ? { kind: 'joints', fractions: target.fractions.map(() => 0) }
    : { ...target, linear: [0, 0, 0], angular: [0, 0, 0] };

/** One arm's jogs through Servo (see the module comment). */
export class ServoJog {
  private readonly servo: ServoPort;
  private readonly host: ServoJogHost;
  private readonly speeds: JogSpeeds;
  private readonly emit: (event: JogEvent) => void;
  /** The command type Servo was last switched to by this jog (undefined: not known). */
  private commandType: ServoCommandKind | undefined;
  private switching: Promise<boolean> | undefined;
  /** The kind the switch in flight asks for. */
  private switchingTo: ServoCommandKind | undefined;
  private target: JogTarget | undefined;
  private untilMs = 0;
  private inForce = false;
  private moving = false;
  private generation = 0;
  private timer: Timer | undefined;
  private pendingEnd: JogEndReason | undefined;

  constructor(servo: ServoPort, host: ServoJogHost, speeds: JogSpeeds, emit: (event: JogEvent) => void) {
    this.servo = servo;
    this.host = host;
    this.speeds = speeds;
    this.emit = emit;
  }

  /** Servo is there to take this jog (a held jog, not a step). */
  takes(request: JogRequest): boolean {
    if (request.goal) return false;
    const present = this.servo.present();
    if (!present) this.commandType = undefined; // a servo node that comes back starts in its own command type
    return present;
  }

  active(): boolean {
    return this.inForce;
  }

  /** Starts or extends a jog through Servo. */
  jog(request: JogRequest): Result<void, string> {
    if (request.continuing && !this.inForce) return err('the jog in force ended before this command');
    const kind = request.target.kind === 'joints' ? SERVO_COMMAND.jointJog : SERVO_COMMAND.twist;
    if (!this.inForce) {
      const state = this.host.state();
      if (!state) return err('no current joint state to jog from: is the controller running?');
      this.inForce = true;
      this.moving = false;
      this.pendingEnd = undefined;
      this.emit({ state: 'started', positions: Array.from(state.position) });
      this.host.log(`jog started: MoveIt Servo commands every ${SERVO_PERIOD_MS} ms`);
    }
    this.target = request.target;
    this.untilMs = this.host.nowMs() + request.ttlS * 1000;
    this.pendingEnd = undefined;
    this.generation++;
    if (this.commandType !== kind) {
      // Once per change of kind: commands that come while the switch is asked do not ask again.
      if (this.switchingTo !== kind) void this.switchTo(kind);
    } else if (!this.timer && !this.switching) this.tick();
    return ok(undefined);
  }

  private async switchTo(kind: ServoCommandKind): Promise<void> {
    this.clearTimer();
    const generation = this.generation;
    this.commandType = undefined;
    const switching = this.servo.switchCommandType(kind);
    this.switching = switching;
    this.switchingTo = kind;
    const switched = await switching;
    if (this.switching === switching) {
      this.switching = undefined;
      this.switchingTo = undefined;
    }
    if (!this.inForce) return;
    if (!switched) {
      this.host.log(`jog: Servo did not switch its command type to ${kind}; the jog ends`);
      this.finish('limit');
      return;
    }
    this.commandType = kind;
    // A newer command of another kind started its own switch meanwhile: that one goes on.
    if (generation === this.generation || (this.target && this.kindOf(this.target) === kind)) this.tick();
  }

  private kindOf(target: JogTarget): ServoCommandKind {
    return target.kind === 'joints' ? SERVO_COMMAND.jointJog : SERVO_COMMAND.twist;
  }

  /** Ends the jog in force with `reason` (a zero command goes out). */
  release(reason: JogEndReason): void {
    if (!this.inForce) return;
    this.pendingEnd = reason;
    this.untilMs = 0;
    if (!this.timer && !this.switching) this.tick();
  }

  /** A stop takes the arm: one zero command, then nothing more; the jog ends as stopped. */
  halt(): void {
    if (!this.inForce) return;
    this.clearTimer();
    if (this.target && this.commandType !== undefined) this.send(ZERO_TARGET(this.target));
    this.inForce = false;
    this.moving = false;
    this.generation++;
    this.host.log('jog ended by a stop: a zero command went to Servo; nothing more is sent');
    const positions = this.positions();
    setImmediate(() => this.emit({ state: 'ended', reason: 'stop', positions }));
  }

  status(): JogStatus {
    return { jogging: this.inForce, moving: this.inForce && this.moving, positions: this.positions(), limit: null };
  }

  close(): void {
    this.clearTimer();
    this.inForce = false;
    this.generation++;
  }

  private positions(): number[] {
    return Array.from(this.host.state()?.position ?? []);
  }

  private clearTimer(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  private send(target: JogTarget): boolean {
    const command = servoCommand(
      target,
      this.speeds,
      this.host.limits,
      this.host.jointNames,
      this.host.frames,
      this.host.rate(),
      this.servo.stamp(),
    );
    const sent =
      command.kind === 'joints' ? this.servo.publishJointJog(command.msg) : this.servo.publishTwist(command.msg);
    if (!sent.ok) this.host.log(`jog: ${sent.error}`);
    return sent.ok;
  }

  /** One period: the command while it holds, else one zero command and the end. */
  private tick(): void {
    this.timer = undefined;
    if (!this.inForce || !this.target) return;
    const holding = this.host.nowMs() < this.untilMs;
    if (!holding) {
      this.send(ZERO_TARGET(this.target));
      this.setMoving(false);
      this.finish(this.pendingEnd ?? 'ttl');
      return;
    }
    if (!this.send(this.target)) {
      this.finish('limit');
      return;
    }
    this.setMoving(this.host.rate() > 0 && !isZero(this.target));
    this.timer = this.host.after(SERVO_PERIOD_MS, () => this.tick());
  }

  private setMoving(moving: boolean): void {
    if (moving === this.moving) return;
    this.moving = moving;
    this.emit({ state: moving ? 'moving' : 'resting', positions: this.positions() });
  }

  /** The end: told once joint states say the arm rests (or after a while). */
  private finish(reason: JogEndReason): void {
    this.clearTimer();
    const generation = ++this.generation;
    void (async () => {
      const deadline = this.host.nowMs() + SETTLE_WAIT_MS;
      const rest = new RestWatch();
      let rested = false;
      while (!rested && this.host.nowMs() < deadline) {
        const msg = await this.host.nextState(200);
        if (generation !== this.generation) return;
        if (msg) rested = rest.observe(this.host.nowMs(), msg.position, msg.velocity);
      }
      if (generation !== this.generation || !this.inForce) return;
      this.inForce = false;
      this.moving = false;
      const positions = this.positions();
      this.host.log(`jog ended (${reason}) through Servo${rested ? '' : '; not seen at rest within 2 s'}`);
      this.emit({ state: 'ended', reason, positions });
    })();
  }
}

function isZero(target: JogTarget): boolean {
  const all = target.kind === 'joints' ? target.fractions : [...target.linear, ...target.angular];
  return all.every((x) => x === 0);
}

/** The endpoints file's part the Servo path reads. */
export interface ServoEndpoints {
  readonly servo: 'auto' | 'off';
  readonly interfaces: {
    readonly servo_switch_command_type: { readonly name: string; readonly type: string };
    readonly servo_joint_jog: { readonly name: string; readonly type: string };
    readonly servo_twist: { readonly name: string; readonly type: string };
  };
}

/** How long (ms) a command-type switch waits for Servo's answer. */
const SWITCH_TIMEOUT_MS = 1000;

/**
 * Servo's interfaces on `node` (undefined when the endpoints file says `servo: off`, or the node cannot make the
 * service client: the trajectory path then). The publishers are made at the first command.
 */
export function createServoPort(
  node: RclNode,
  endpoints: ServoEndpoints,
  log: (line: string) => void,
): ServoPort | undefined {
  if (endpoints.servo === 'off') return undefined;
  const { servo_switch_command_type: service, servo_joint_jog: joints, servo_twist: twist } = endpoints.interfaces;
  let client: RclClient;
  try {
    client = node.createClient(service.type, service.name);
  } catch (e) {
    log(`MoveIt Servo not used: no client for ${service.name} (${(e as Error).message})`);
    return undefined;
  }
  const publishers = new Map<string, RclPublisher>();
  const publish = (iface: { name: string; type: string }, msg: object): Result<void, string> => {
    try {
      let publisher = publishers.get(iface.name);
      if (!publisher) {
        publisher = node.createPublisher(iface.type, iface.name);
        publishers.set(iface.name, publisher);
      }
      publisher.publish(msg);
      return ok(undefined);
    } catch (e) {
      return err(`publishing on ${iface.name} failed: ${(e as Error).message}`);
    }
  };
  return {
    present: () => {
      try {
        return client.isServiceServerAvailable();
      } catch {
        return false;
      }
    },
    switchCommandType: (kind) =>
      new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), SWITCH_TIMEOUT_MS);
        try {
          client.sendRequest({ command_type: kind }, (response) => {
            clearTimeout(timer);
            resolve(
              typeof response === 'object' && response !== null && (response as { success?: unknown }).success === true,
            );
          });
        } catch {
          clearTimeout(timer);
          resolve(false);
        }
      }),
    publishJointJog: (msg) => publish(joints, msg),
    publishTwist: (msg) => publish(twist, msg),
    stamp: () => nodeStamp(node),
  };
}

/** The node's clock now (ROS time when the node uses sim time), else the wall clock. */
export function nodeStamp(node: RclNode): Stamp {
  const now = node.now?.();
  if (now) {
    const { seconds, nanoseconds } = now.secondsAndNanoseconds;
    return { sec: Number(seconds), nanosec: Number(nanoseconds) };
  }
  const ms = Date.now();
  return { sec: Math.floor(ms / 1000), nanosec: (ms % 1000) * 1e6 };
}

/** The jog port's `servo` (lib/ros/rcl-jog.ts) on `node`: Servo's interfaces and the frames of a twist. */
export function servoFor(
  node: RclNode,
  endpoints: ServoEndpoints & { readonly planning_frame: string; readonly tcp_link: string },
  log: (line: string) => void,
): { port: ServoPort; frames: { base: string; tool: string } } | undefined {
  const port = createServoPort(node, endpoints, log);
  return port ? { port, frames: { base: endpoints.planning_frame, tool: endpoints.tcp_link } } : undefined;
}
