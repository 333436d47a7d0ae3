/**
 * The safety envelope: a workspace box the TCP never leaves and keep-out boxes no link enters,
 * axis-aligned in the planning frame. Pure: forward kinematics of the pure chain, no clock, no I/O,
 * so the same check runs on the main thread (planned motions) and on the trajectory worker.
 *
 * Links are capsules of `linkRadiusM` around the kinematic skeleton: link i+1 is the segment from
 * joint i+1's origin to joint i+2's (the last one ends at the TCP), sampled every
 * {@link SEGMENT_STEP_M} with a point-to-box distance at each sample. The base does not move and is
 * not checked.
 */
import type { Chain } from '../kinematics/chain.ts';
import { createFkWorkspace, type FkWorkspace, forwardKinematics } from '../kinematics/fk.ts';

/** An axis-aligned box (m, planning frame). */
export interface EnvelopeBox {
  readonly min: readonly number[];
  readonly max: readonly number[];
}

/** A named keep-out box. */
export interface KeepOutBox extends EnvelopeBox {
  readonly name: string;
}

/** The envelope: the TCP stays inside `workspace` (when set); no link comes within `linkRadiusM` of a keep-out box. */
export interface Envelope {
  readonly workspace?: EnvelopeBox;
  readonly keepOut: readonly KeepOutBox[];
  readonly linkRadiusM: number;
}

/** Where a configuration leaves the envelope: the zone, the link (or 'the TCP') and a sentence. */
export interface EnvelopeViolation {
  /** `workspace` or the keep-out box's name. */
  readonly zone: string;
  readonly kind: 'workspace' | 'keep_out';
  readonly link: string;
  /** The TCP position (workspace) or the link's point nearest the box (keep-out), m. */
  readonly pointM: readonly [number, number, number];
  /** E.g. "the TCP would leave the workspace at (0.1, 0.2, 1.3) m (z above 1.2)". */
  readonly message: string;
}

/** Sampling step along a link's skeleton segment (m); the check adds half of it to the radius. */
export const SEGMENT_STEP_M = 0.02;
const AXES = ['x', 'y', 'z'] as const;

/** True when the envelope restricts anything. */
export function envelopeActive(envelope: Envelope | undefined): envelope is Envelope {
  return envelope !== undefined && (envelope.workspace !== undefined || envelope.keepOut.length > 0);
}

/** Distance from a point to a box (0 inside). */
function pointBoxDistance(x: number, y: number, z: number, box: EnvelopeBox): number {
  const dx = Math.max((box.min[0] ?? 0) - x, 0, x - (box.max[0] ?? 0));
  const dy = Math.max((box.min[1] ?? 0) - y, 0, y - (box.max[1] ?? 0));
  const dz = Math.max((box.min[2] ?? 0) - z, 0, z - (box.max[2] ?? 0));
  return Math.sqrt(dx * dx + dy * dy + dz * dz);
}

const fmt = (p: readonly number[]) => `(${p.map((v) => v.toFixed(3)).join(', ')})`;

/** Where the TCP at `tcp` (m, planning frame) is outside the workspace, if it is. */
function workspaceViolation(envelope: Envelope, tcp: readonly [number, number, number]): EnvelopeViolation | undefined {
  const box = envelope.workspace;
  if (!box) return undefined;
  for (let a = 0; a < 3; a++) {
    const v = tcp[a] ?? 0;
    const low = box.min[a] ?? 0,
      high = box.max[a] ?? 0;
    if (v < low || v > high) {
      const side = v < low ? `${AXES[a]} below ${low}` : `${AXES[a]} above ${high}`;
      return {
        zone: 'workspace',
        kind: 'workspace',
        link: 'the TCP',
        pointM: tcp,
        message: `the TCP would leave the workspace at ${fmt(tcp)} m (${side})`,
      };
    }
  }
  return undefined;
}

/**
 * Where a TCP position alone (m, planning frame) leaves the envelope: outside the workspace, or
 * within `linkRadiusM` of a keep-out box (the last link's capsule ends there). What can be said of
 * a pose target without knowing the configuration the stack will choose for it.
 */
export function tcpPointViolation(
  envelope: Envelope,
  tcp: readonly [number, number, number],
): EnvelopeViolation | undefined {
  const outside = workspaceViolation(envelope, tcp);
  if (outside) return outside;
  for (const zone of envelope.keepOut) {
    if (pointBoxDistance(tcp[0], tcp[1], tcp[2], zone) < envelope.linkRadiusM || insideBox(tcp, zone))
      return {
        zone: zone.name,
        kind: 'keep_out',
        link: 'the TCP',
        pointM: tcp,
        message: `the TCP would enter the keep-out zone '${zone.name}' at ${fmt(tcp)} m`,
      };
  }
  return undefined;
}

function insideBox(p: readonly number[], box: EnvelopeBox): boolean {
  return [0, 1, 2].every((a) => (p[a] ?? 0) >= (box.min[a] ?? 0) && (p[a] ?? 0) <= (box.max[a] ?? 0));
}

/** A checker of configurations against one envelope, with its own FK workspace (no allocation per check). */
export interface EnvelopeChecker {
  readonly envelope: Envelope;
  /** The first violation at `qRad` (the workspace first, then links from the base out), or undefined. */
  check(qRad: ArrayLike<number>): EnvelopeViolation | undefined;
  /**
   * The smallest clearance at `qRad` (m): of the TCP to the workspace's faces and of the links'
   * capsules to the keep-out boxes; negative inside a zone; Infinity with nothing to keep clear of.
   */
  clearance(qRad: ArrayLike<number>): number;
}

/** A checker for `envelope` on `chain` (the TCP chain: the tool offset included). */
export function createEnvelopeChecker(chain: Chain, envelope: Envelope): EnvelopeChecker {
  const ws: FkWorkspace = createFkWorkspace(chain);
  const n = chain.jointNames.length;
  const radius = envelope.linkRadiusM + SEGMENT_STEP_M / 2;
  /** Visits sample points of each link segment: (link index, x, y, z); stops when visit returns true. */
  const visitLinks = (visit: (link: number, x: number, y: number, z: number) => boolean): boolean => {
    for (let i = 0; i < n; i++) {
      const ax = ws.originW[3 * i] ?? 0,
        ay = ws.originW[3 * i + 1] ?? 0,
        az = ws.originW[3 * i + 2] ?? 0;
      const bx = i + 1 < n ? (ws.originW[3 * i + 3] ?? 0) : (ws.tipPos[0] ?? 0);
      const by = i + 1 < n ? (ws.originW[3 * i + 4] ?? 0) : (ws.tipPos[1] ?? 0);
      const bz = i + 1 < n ? (ws.originW[3 * i + 5] ?? 0) : (ws.tipPos[2] ?? 0);
      const length = Math.hypot(bx - ax, by - ay, bz - az);
      const steps = Math.max(1, Math.ceil(length / SEGMENT_STEP_M));
      for (let k = 0; k <= steps; k++) {
        const s = k / steps;
        if (visit(i, ax + (bx - ax) * s, ay + (by - ay) * s, az + (bz - az) * s)) return true;
      }
    }
    return false;
  };
  const linkName = (i: number) => (i + 1 < n ? `link${i + 1}` : `link${n} (to the TCP)`);

  return {
    envelope,
    check(qRad) {
      forwardKinematics(chain, qRad, ws);
      const tcp = [ws.tipPos[0] ?? 0, ws.tipPos[1] ?? 0, ws.tipPos[2] ?? 0] as const;
      const outside = workspaceViolation(envelope, tcp);
      if (outside) return outside;
      if (envelope.keepOut.length === 0) return undefined;
      let found: EnvelopeViolation | undefined;
      visitLinks((link, x, y, z) => {
        for (const zone of envelope.keepOut) {
          if (pointBoxDistance(x, y, z, zone) < radius) {
            const at = [x, y, z] as const;
            found = {
              zone: zone.name,
              kind: 'keep_out',
              link: linkName(link),
              pointM: at,
              message: `${linkName(link)} would enter the keep-out zone '${zone.name}' near ${fmt(at)} m`,
            };
            return true;
          }
        }
        return false;
      });
      return found;
    },
    clearance(qRad) {
      forwardKinematics(chain, qRad, ws);
      let best = Number.POSITIVE_INFINITY;
      const box = envelope.workspace;
      if (box) {
        for (let a = 0; a < 3; a++) {
          const v = ws.tipPos[a] ?? 0;
          best = Math.min(best, v - (box.min[a] ?? 0), (box.max[a] ?? 0) - v);
        }
      }
      if (envelope.keepOut.length > 0)
        visitLinks((_link, x, y, z) => {
          for (const zone of envelope.keepOut) best = Math.min(best, pointBoxDistance(x, y, z, zone) - radius);
          return false;
        });
      return best;
    },
  };
}

/** The `safety` settings as an envelope (undefined when neither a workspace nor a keep-out box is set). */
export function envelopeFromSettings(safety: {
  readonly workspace?: { readonly min: readonly number[]; readonly max: readonly number[] } | undefined;
  readonly keep_out: readonly {
    readonly name: string;
    readonly min: readonly number[];
    readonly max: readonly number[];
  }[];
  readonly link_radius_m: number;
}): Envelope | undefined {
  const envelope: Envelope = {
    ...(safety.workspace ? { workspace: { min: [...safety.workspace.min], max: [...safety.workspace.max] } } : {}),
    keepOut: safety.keep_out.map((box) => ({ name: box.name, min: [...box.min], max: [...box.max] })),
    linkRadiusM: safety.link_radius_m,
  };
  return envelopeActive(envelope) ? envelope : undefined;
}
