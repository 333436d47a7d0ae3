/**
 * The simulated joint drives: each period they take the state the controller commands and reach
 * it exactly when that is within the joint's acceleration limit; otherwise they follow it with
 * limited acceleration and velocity, braking in time before the position limits, as a real drive
 * clips what it cannot do. Reported velocities always match the motion of the positions. Pure: the
 * caller owns the state and the clock.
 */
import type { JointSample } from '../planning/trajectory.ts';
import type { JointLimits } from '../robot/limits.ts';

/** Relative slack on the acceleration limit before a command counts as beyond it (rounding). */
const RELATIVE_TOLERANCE = 1e-6;
/** Absolute slack (rad/s^2) for commands near zero acceleration. */
const ABSOLUTE_TOLERANCE_RAD_S2 = 1e-6;
/** Share of the acceleration limit the tracking plans its braking with (the rest absorbs the command's own). */
const TRACKING_BRAKE_SHARE = 0.5;
/** Gain of the tracking near the command, per period (a quarter of the error: settles in a few periods, no ringing). */
const TRACKING_GAIN = 0.25;

/** What a drive could not follow exactly in one period (the joint that needed most over its limit). */
export interface ClipInfo {
  /** Joint index, or -1 when every joint followed exactly. */
  joint: number;
  /** The acceleration (rad/s^2) the command needed. */
  needRadS2: number;
  /** Why: beyond the acceleration limit, or unable to brake before a position limit. */
  cause: 'acceleration' | 'position limit';
}

/** A fresh ClipInfo (no clip). */
export function createClipInfo(): ClipInfo {
  return { joint: -1, needRadS2: 0, cause: 'acceleration' };
}

/**
 * Largest velocity toward a limit `distance` away (rad) after one period that still allows a stop
 * before it at `acc`: v'^2 + acc dt v' <= 2 acc (distance - v dt / 2), from the trapezoid
 * integration of the period and of the braking that follows.
 */
export function brakingBound(distance: number, v: number, acc: number, dtS: number): number {
  const radicand = acc * acc * dtS * dtS + 8 * acc * (distance - (v * dtS) / 2);
  return (-acc * dtS + Math.sqrt(Math.max(0, radicand))) / 2;
}

/**
 * Advances `state` by one period of `dtS` toward `command` (the commanded positions, velocities
 * and accelerations at the end of the period). A joint whose command is reachable within its
 * acceleration limit (judged from both the velocity change and the position change), within its
 * velocity limit and with room to brake before its position limits takes the command exactly.
 * Any other joint accelerates at most at its limit toward the command (on a braking curve, so it
 * settles on it without overshoot) and never passes its position limits. Returns true when every
 * joint followed exactly; otherwise `clip` names the joint that needed most.
 */
export function driveStep(
  state: JointSample,
  command: JointSample,
  limits: JointLimits,
  dtS: number,
  clip: ClipInfo,
): boolean {
  clip.joint = -1;
  clip.needRadS2 = 0;
  let worstRatio = 0;
  const n = state.q.length;
  for (let j = 0; j < n; j++) {
    const q = state.q[j] ?? 0;
    const v = state.qd[j] ?? 0;
    const qc = command.q[j] ?? 0;
    const vc = command.qd[j] ?? 0;
    const acc = limits.maxAccRadS2[j] ?? 0;
    const vel = limits.maxVelRadS[j] ?? 0;
    const lo = limits.minRad[j] ?? 0;
    const hi = limits.maxRad[j] ?? 0;
    const need = Math.max(Math.abs((vc - v) / dtS), Math.abs((2 * (qc - q - v * dtS)) / (dtS * dtS)));
    const room = vc >= 0 ? hi - qc : qc - lo;
    const canBrake = vc * vc <= 2 * acc * (1 + RELATIVE_TOLERANCE) * room + 1e-12;
    const withinAcc = need <= acc * (1 + RELATIVE_TOLERANCE) + ABSOLUTE_TOLERANCE_RAD_S2;
    if (withinAcc && canBrake && Math.abs(vc) <= vel * (1 + RELATIVE_TOLERANCE) && qc >= lo && qc <= hi) {
      state.q[j] = qc;
      state.qd[j] = vc;
      state.qdd[j] = command.qdd[j] ?? 0;
      continue;
    }
    const ratio = withinAcc ? 1 : need / acc;
    if (clip.joint < 0 || ratio > worstRatio) {
      worstRatio = ratio;
      clip.joint = j;
      clip.needRadS2 = need;
      clip.cause = withinAcc ? 'position limit' : 'acceleration';
    }
    // Where the joint would be at the end of the period if it coasted, relative to the command.
    const e = q + v * dtS - qc;
    const brakeShare = TRACKING_BRAKE_SHARE * acc;
    const catchUp = Math.min(Math.sqrt(2 * brakeShare * Math.abs(e)), (TRACKING_GAIN * Math.abs(e)) / dtS);
    let vNext = vc - Math.sign(e) * catchUp;
    vNext = Math.min(vel, Math.max(-vel, vNext));
    vNext = Math.min(vNext, brakingBound(hi - q, v, acc, dtS));
    vNext = Math.max(vNext, -brakingBound(q - lo, -v, acc, dtS));
    vNext = Math.min(v + acc * dtS, Math.max(v - acc * dtS, vNext));
    let qNext = q + ((v + vNext) / 2) * dtS;
    if (qNext > hi || qNext < lo) {
      // Only within rounding of the braking bound: a hard stop at the limit.
      qNext = Math.min(hi, Math.max(lo, qNext));
      vNext = 0;
    }
    state.q[j] = qNext;
    state.qd[j] = vNext;
    state.qdd[j] = (vNext - v) / dtS;
  }
  return clip.joint < 0;
}
