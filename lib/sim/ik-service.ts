import type { Chain } from '../kinematics/chain.ts';
import { createFkWorkspace, forwardKinematics } from '../kinematics/fk.ts';
import { createIkWorkspace, type IkWorkspace, solveIk } from '../kinematics/ik.ts';
import type { JointLimits } from '../robot/limits.ts';
import type { IkAnswer } from '../ros/messages.ts';
import type { Contact } from './model.ts';
import { sliceCheckpoint } from './sliced.ts';
import { seededRandom } from '../random.ts';

/** The collision check the IK service asks (the simulator's model). */
export interface CollisionCheck {
  collisionAt(qRad: ArrayLike<number>): Contact | undefined;
}

/** A TCP target: position (m) and row-major rotation in the chain's base frame. */
export interface IkTarget {
  readonly positionM: readonly number[];
  readonly rotation: ArrayLike<number>;
}

/** Share of the budget kept for the search beyond the joint limits that explains a failure. */
const EXPLAIN_SHARE = 0.2;

const fmt = (values: readonly number[], digits = 4) => `[${values.map((v) => v.toFixed(digits)).join(', ')}]`;

/**
 * The reach of an arm whose shoulder (J1/J2 axes), elbow (J3/J4) and wrist (J6/J7) axes meet in
 * points, as the iiwa's do: the wrist centre is at most |shoulder - elbow| + |elbow - wrist| from
 * the shoulder and sits at a fixed offset in the TCP frame. Undefined when the chain does not have
 * that structure (checked on sample configurations), and the check is then skipped.
 */
interface Reach {
  readonly shoulder: Float64Array;
  readonly wristInTcp: Float64Array;
  readonly maxM: number;
}

/** Where joint axes i and k meet (the midpoint of their closest points), or undefined when they miss by > 1 um. */
function axesMeet(originW: Float64Array, axisW: Float64Array, i: number, k: number): Float64Array | undefined {
  const p = originW.subarray(3 * i, 3 * i + 3);
  const u = axisW.subarray(3 * i, 3 * i + 3);
  const q = originW.subarray(3 * k, 3 * k + 3);
  const v = axisW.subarray(3 * k, 3 * k + 3);
  const dot = (x: ArrayLike<number>, y: ArrayLike<number>) =>
    (x[0] ?? 0) * (y[0] ?? 0) + (x[1] ?? 0) * (y[1] ?? 0) + (x[2] ?? 0) * (y[2] ?? 0);
  const w0 = [0, 1, 2].map((j) => (p[j] ?? 0) - (q[j] ?? 0));
  const a = dot(u, u);
  const b = dot(u, v);
  const c = dot(v, v);
  const d = dot(u, w0);
  const e = dot(v, w0);
  const den = a * c - b * b;
  if (Math.abs(den) < 1e-12) return undefined;
  const sc = (b * e - c * d) / den;
  const tc = (a * e - b * d) / den;
  const onI = [0, 1, 2].map((j) => (p[j] ?? 0) + sc * (u[j] ?? 0));
  const onK = [0, 1, 2].map((j) => (q[j] ?? 0) + tc * (v[j] ?? 0));
  if (Math.hypot(...onI.map((x, j) => x - (onK[j] ?? 0))) > 1e-6) return undefined;
  return Float64Array.from(onI, (x, j) => (x + (onK[j] ?? 0)) / 2);
}

const distance = (x: ArrayLike<number>, y: ArrayLike<number>) =>
  Math.hypot((x[0] ?? 0) - (y[0] ?? 0), (x[1] ?? 0) - (y[1] ?? 0), (x[2] ?? 0) - (y[2] ?? 0));

function reachOf(chain: Chain, limits: JointLimits): Reach | undefined {
  const n = chain.jointNames.length;
  if (n !== 7) return undefined;
  const ws = createFkWorkspace(chain);
  const points = (q: ArrayLike<number>) => {
    forwardKinematics(chain, q, ws, true);
    const shoulder = axesMeet(ws.originW, ws.axisW, 0, 1);
    const elbow = axesMeet(ws.originW, ws.axisW, 2, 3);
    const wrist = axesMeet(ws.originW, ws.axisW, 5, 6);
    if (!shoulder || !elbow || !wrist) return undefined;
    const d = [0, 1, 2].map((k) => (wrist[k] ?? 0) - (ws.tipPos[k] ?? 0));
    const r = ws.tipRot;
    // R^T d: the wrist centre in the TCP frame.
    const inTcp = Float64Array.from([0, 1, 2], (c) =>
      [0, 1, 2].reduce((sum, k) => sum + (r[3 * k + c] ?? 0) * (d[k] ?? 0), 0),
    );
    return { shoulder, inTcp, upper: distance(shoulder, elbow), fore: distance(elbow, wrist) };
  };
  const first = points(new Float64Array(n));
  if (!first) return undefined;
  const random = seededRandom(7);
  for (let trial = 0; trial < 16; trial++) {
    const q = Float64Array.from({ length: n }, (_, j) => {
      const lo = limits.minRad[j] ?? -1;
      const hi = limits.maxRad[j] ?? 1;
      return lo + random() * (hi - lo);
    });
    const other = points(q);
    if (
      !other ||
      distance(other.shoulder, first.shoulder) > 1e-6 ||
      distance(other.inTcp, first.inTcp) > 1e-6 ||
      Math.abs(other.upper - first.upper) > 1e-6 ||
      Math.abs(other.fore - first.fore) > 1e-6
    )
      return undefined;
  }
  return { shoulder: first.shoulder, wristInTcp: first.inTcp, maxM: first.upper + first.fore };
}

/**
 * Inverse kinematics on request for the simulator: the solver of lib/kinematics/ik.ts from the
 * seed, then from deterministic random restarts within the joint limits, one attempt per step with
 * the event loop handed back between steps, until a solution (collision-free when asked) or the
 * time budget. A target beyond the arm's reach fails at once; a failure says why (out of reach,
 * only beyond the joint limits, only in collision, or none found in time). Never moves the arm.
 */
export class SimIkService {
  private readonly chain: Chain;
  private readonly limits: JointLimits;
  private readonly collisions: CollisionCheck;
  private readonly nowMs: () => number;
  private readonly reach: Reach | undefined;
  private readonly ws: IkWorkspace;
  private readonly wide: { minRad: number[]; maxRad: number[] };

  constructor(chain: Chain, limits: JointLimits, collisions: CollisionCheck, nowMs: () => number) {
    this.chain = chain;
    this.limits = limits;
    this.collisions = collisions;
    this.nowMs = nowMs;
    this.reach = reachOf(chain, limits);
    this.ws = createIkWorkspace(chain);
    this.wide = { minRad: limits.minRad.map(() => -2 * Math.PI), maxRad: limits.maxRad.map(() => 2 * Math.PI) };
  }

  /** The wrist centre's distance from the shoulder for `target`, when beyond the reach (m); else undefined. */
  private beyondReach(target: IkTarget): { distanceM: number; reachM: number } | undefined {
    const reach = this.reach;
    if (!reach) return undefined;
    const r = target.rotation;
    const d = reach.wristInTcp;
    let sq = 0;
    for (let k = 0; k < 3; k++) {
      const w =
        (target.positionM[k] ?? 0) +
        (r[3 * k] ?? 0) * (d[0] ?? 0) +
        (r[3 * k + 1] ?? 0) * (d[1] ?? 0) +
        (r[3 * k + 2] ?? 0) * (d[2] ?? 0);
      sq += (w - (reach.shoulder[k] ?? 0)) ** 2;
    }
    const distanceM = Math.sqrt(sq);
    return distanceM > reach.maxM + 1e-6 ? { distanceM, reachM: reach.maxM } : undefined;
  }

  /**
   * Solves for `target` from `seedRad` within `budgetMs`: the answer carries the joints (rad,
   * J1..J7, within the limits) or the reason. `signal` abandons the search at its next step.
   */
  async solve(
    target: IkTarget,
    seedRad: readonly number[],
    collisionCheck: boolean,
    budgetMs: number,
    signal?: AbortSignal,
  ): Promise<IkAnswer> {
    const pose = `${fmt([...target.positionM])} m`;
    const far = this.beyondReach(target);
    if (far)
      return {
        success: false,
        message: `${pose} is out of reach: the wrist centre would be ${far.distanceM.toFixed(3)} m from the shoulder, the arm reaches ${far.reachM.toFixed(3)} m`,
      };
    const started = this.nowMs();
    const end = started + budgetMs * (1 - EXPLAIN_SHARE);
    const random = seededRandom(1);
    const checkpoint = sliceCheckpoint(this.nowMs);
    const { minRad, maxRad } = this.limits;
    const attemptSeed = Float64Array.from(seedRad);
    let contact: Contact | undefined;
    let best = { posErrM: Number.POSITIVE_INFINITY, rotErrRad: Number.POSITIVE_INFINITY };
    for (let attempt = 0; ; attempt++) {
      if (signal?.aborted)
        return { success: false, message: typeof signal.reason === 'string' ? signal.reason : 'cancelled' };
      if (attempt > 0)
        for (let j = 0; j < attemptSeed.length; j++)
          attemptSeed[j] = (minRad[j] ?? 0) + random() * ((maxRad[j] ?? 0) - (minRad[j] ?? 0));
      const ik = this.attempt(this.limits, target, attemptSeed, random);
      if (ik.status === 'converged') {
        const hit = collisionCheck ? this.collisions.collisionAt(ik.qRad) : undefined;
        if (!hit) {
          const joints = Array.from(ik.qRad);
          const how = collisionCheck ? 'within the joint limits and free of collisions' : 'within the joint limits';
          return {
            success: true,
            joints,
            message: `solution ${how} (${(ik.posErrM * 1000).toFixed(4)} mm, ${((ik.rotErrRad * 180) / Math.PI).toFixed(4)} deg from the pose)`,
          };
        }
        contact ??= hit;
      } else if (ik.posErrM + ik.rotErrRad < best.posErrM + best.rotErrRad) {
        best = { posErrM: ik.posErrM, rotErrRad: ik.rotErrRad };
      }
      if (this.nowMs() >= end) break;
      await checkpoint();
    }
    const budgetS = (budgetMs / 1000).toFixed(2);
    if (contact)
      return {
        success: false,
        message: `${pose}: every solution found within the joint limits in ${budgetS} s is in collision (${contact.a} with ${contact.b})`,
      };
    return { success: false, message: await this.explain(target, pose, budgetS, started + budgetMs, best, signal) };
  }

  /** One run of the solver from `seed` within `bounds`: no restarts, no deadline of its own (the caller's loop has it). */
  private attempt(
    bounds: { readonly minRad: ArrayLike<number>; readonly maxRad: ArrayLike<number> },
    target: IkTarget,
    seed: ArrayLike<number>,
    random: () => number,
  ) {
    const { minRad, maxRad } = bounds;
    const options = { deadlineMs: Number.POSITIVE_INFINITY, nowMs: this.nowMs, random, maxRestarts: 0 };
    return solveIk(this.chain, minRad, maxRad, target.positionM, target.rotation, seed, options, this.ws);
  }

  /** Why no solution was found: one beyond the joint limits exists (naming the joints), or none. */
  private async explain(
    target: IkTarget,
    pose: string,
    budgetS: string,
    endMs: number,
    best: { posErrM: number; rotErrRad: number },
    signal?: AbortSignal,
  ): Promise<string> {
    const random = seededRandom(2);
    const checkpoint = sliceCheckpoint(this.nowMs);
    const seed = new Float64Array(this.limits.minRad.length);
    while (this.nowMs() < endMs && !signal?.aborted) {
      for (let j = 0; j < seed.length; j++) seed[j] = (random() * 2 - 1) * Math.PI;
      const ik = this.attempt(this.wide, target, seed, random);
      if (ik.status === 'converged') {
        const outside = this.limits.jointNames.flatMap((name, j) => {
          const q = ik.qRad[j] ?? 0;
          const lo = this.limits.minRad[j] ?? 0;
          const hi = this.limits.maxRad[j] ?? 0;
          return q < lo || q > hi ? [`${name} ${q.toFixed(3)} rad (limits [${lo}, ${hi}])`] : [];
        });
        if (outside.length > 0)
          return `${pose}: no solution within the joint limits in ${budgetS} s; the pose is reachable only beyond them, e.g. ${outside.join(', ')}`;
      }
      await checkpoint();
    }
    const closest = Number.isFinite(best.posErrM)
      ? ` (closest: ${(best.posErrM * 1000).toFixed(1)} mm, ${((best.rotErrRad * 180) / Math.PI).toFixed(1)} deg away)`
      : '';
    return `${pose}: no solution within the joint limits found in ${budgetS} s${closest}: the orientation is likely out of reach there`;
  }
}
