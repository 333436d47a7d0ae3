/**
 * The test stack's hooks for tests (README.md, "The contract"): JSON lines of events on stdout, the
 * fault table, and the commands read from stdin. No ROS.
 */

import { at } from './model.ts';

/** The interfaces by the keys of armgate's endpoints file. */
export const IFACES = [
  'joint_states',
  'trajectory',
  'follow_joint_trajectory',
  'compute_fk',
  'compute_ik',
  'plan_kinematic_path',
  'apply_planning_scene',
  'move_to_joints',
  'move_to_pose',
  'move_to_named',
  'stop',
] as const;
export type Iface = (typeof IFACES)[number];

const TOPICS: readonly Iface[] = ['joint_states', 'trajectory'];
/** The real controller's interfaces (ros2_control's processes): a fault there is what the stack can do to them. */
export const CONTROLLER_IFACES: readonly Iface[] = ['joint_states', 'trajectory', 'follow_joint_trajectory'];
const ACTIONS: readonly Iface[] = ['follow_joint_trajectory', 'move_to_joints', 'move_to_pose'];

export type FaultMode = 'silent' | 'late' | 'abort' | 'reject';
export interface Fault {
  readonly mode: FaultMode;
  readonly delayS: number;
}

/** JSON with typed arrays as arrays and bigints as numbers. */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (typeof v === 'bigint') return Number(v);
    if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return Array.from(v as unknown as ArrayLike<number>);
    return v;
  });
}

export type Emit = (event: Record<string, unknown>) => void;

/** One event as one line on stdout. */
export const emitStdout: Emit = (event) => {
  process.stdout.write(`${toJson(event)}\n`);
};

export class Faults {
  private readonly table = new Map<Iface, Fault>();

  get(iface: Iface): Fault | undefined {
    return this.table.get(iface);
  }

  clear(): void {
    this.table.clear();
  }

  delete(iface: Iface): void {
    this.table.delete(iface);
  }

  /** The interfaces with a fault. */
  keys(): Iface[] {
    return [...this.table.keys()];
  }

  /** Sets a fault; an error text when the interface or mode is unknown or does not apply. */
  set(iface: string, mode: string, delayS?: unknown): string | undefined {
    if (!(IFACES as readonly string[]).includes(iface)) return `unknown iface '${iface}' (one of ${IFACES.join(', ')})`;
    const name = iface as Iface;
    if (!['silent', 'late', 'abort', 'reject'].includes(mode))
      return `unknown mode '${mode}' (silent, late, abort or reject)`;
    if (TOPICS.includes(name) && mode !== 'silent') return `${iface} is a topic: only mode 'silent' applies`;
    if (
      mode === 'abort' &&
      !ACTIONS.includes(name) &&
      name !== 'move_to_named' &&
      name !== 'stop' &&
      !isMoveItService(name)
    )
      return `mode 'abort' does not apply to ${iface}`;
    let delay = 0;
    if (mode === 'late') {
      if (typeof delayS !== 'number' || !Number.isFinite(delayS) || delayS < 0 || delayS > 3600)
        return "mode 'late' needs delay_s, a number of seconds in [0, 3600]";
      delay = delayS;
    }
    this.table.set(name, { mode: mode as FaultMode, delayS: delay });
    return undefined;
  }

  /** A `--fault NAME=MODE` flag (MODE: silent, abort, reject, late:SECONDS). */
  setFromFlag(text: string): string | undefined {
    const match = /^([a-z_]+)=(silent|abort|reject|late(?::([0-9.]+))?)$/.exec(text);
    if (!match) return `--fault ${text}: expected NAME=silent|abort|reject|late:SECONDS`;
    const mode = at(match, 2).startsWith('late') ? 'late' : at(match, 2);
    return this.set(at(match, 1), mode, match[3] === undefined ? undefined : Number(match[3]));
  }
}

function isMoveItService(name: Iface): boolean {
  return (
    name === 'compute_fk' || name === 'compute_ik' || name === 'plan_kinematic_path' || name === 'apply_planning_scene'
  );
}

/** What the commands act on. */
export interface CommandTarget {
  readonly faults: Faults;
  state(): { positions: number[]; moving: boolean };
  /** Moves the arm there from rest; an error text when refused. */
  set(positions: number[]): Promise<string | undefined>;
  /** Puts a fault on (or off) an interface of the real controller; an error text when it cannot. */
  fault(iface: Iface, on: boolean): Promise<string | undefined>;
}

/** Applies the faults on the real controller's interfaces (after the table changed); drops those refused. */
export async function applyControllerFault(
  target: CommandTarget,
  iface: Iface,
  on: boolean,
): Promise<string | undefined> {
  const refused = await target.fault(iface, on);
  if (refused && on) target.faults.delete(iface);
  return refused;
}

/** Handles one stdin line: the events to write (an ack, and the state for `state`). */
export async function handleCommand(line: string, target: CommandTarget): Promise<Record<string, unknown>[]> {
  let command: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(line);
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
    command = parsed as Record<string, unknown>;
  } catch {
    return [{ event: 'ack', cmd: null, ok: false, error: 'expected a JSON object per line' }];
  }
  const cmd = command.cmd;
  const ack = (error?: string) => ({ event: 'ack', cmd, ok: error === undefined, ...(error ? { error } : {}) });
  switch (cmd) {
    case 'fault': {
      const iface = String(command.iface);
      const refused = target.faults.set(iface, String(command.mode), command.delay_s);
      if (refused || !(CONTROLLER_IFACES as readonly string[]).includes(iface)) return [ack(refused)];
      return [ack(await applyControllerFault(target, iface as Iface, true))];
    }
    case 'clear': {
      const controlled = target.faults.keys().filter((i) => CONTROLLER_IFACES.includes(i));
      target.faults.clear();
      for (const iface of controlled) await target.fault(iface, false);
      return [ack()];
    }
    case 'state':
      return [ack(), { event: 'state', ...target.state() }];
    case 'set': {
      const p = command.positions;
      if (!Array.isArray(p) || p.length !== 7 || !p.every((v) => typeof v === 'number' && Number.isFinite(v)))
        return [ack('positions: expected 7 finite numbers (rad)')];
      return [ack(await target.set(p as number[]))];
    }
    default:
      return [ack(`unknown cmd ${JSON.stringify(cmd)} (fault, clear, state or set)`)];
  }
}
