import { XMLParser } from 'fast-xml-parser';
import { err, ok, type Result } from '../result.ts';

/**
 * A serial chain of revolute joints as plain arrays, for fast pure-TypeScript kinematics.
 * Joint i's frame sits at `originPos/originRot[i]` in the frame of joint i-1 (the base for
 * i = 0) and turns about `axis[i]` in its own frame; the tip (TCP link) is fixed to the last
 * joint's frame by `tipPos/tipRot`. Rotations are row-major 3x3.
 */
export interface Chain {
  readonly jointNames: readonly string[];
  readonly originPos: Float64Array;
  readonly originRot: Float64Array;
  readonly axis: Float64Array;
  readonly tipPos: Float64Array;
  readonly tipRot: Float64Array;
}

/** A URDF <joint> element as fast-xml-parser reads it (attributes as plain keys). */
export interface RawJoint {
  readonly name?: string;
  readonly type?: string;
  readonly parent?: { readonly link?: string };
  readonly child?: { readonly link?: string };
  readonly origin?: { readonly xyz?: string; readonly rpy?: string };
  readonly axis?: { readonly xyz?: string };
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  isArray: (name, _p, _l, isAttribute) => !isAttribute && name === 'joint',
});

/**
 * The last text read and what it gave: start-up reads the one robot description three times (the safety envelope's
 * chain, the simulator's chain, the joint-state tree), and parsing it is most of each (~5-15 ms under load).
 */
let lastRead: { readonly urdf: string; readonly joints: Result<readonly RawJoint[], string> } | undefined;

/** The <joint> elements of URDF text, in document order, or why the text is not XML (read-only: shared by callers). */
export function urdfJoints(urdf: string): Result<readonly RawJoint[], string> {
  if (lastRead?.urdf === urdf) return lastRead.joints;
  let joints: Result<readonly RawJoint[], string>;
  try {
    const doc = parser.parse(urdf) as { robot?: { joint?: RawJoint[] } };
    joints = ok(doc.robot?.joint ?? []);
  } catch (e) {
    joints = err(`malformed URDF: ${(e as Error).message.split('\n')[0]}`);
  }
  lastRead = { urdf, joints };
  return joints;
}

/** The three numbers of a URDF `xyz`/`rpy` attribute, or `fallback` when absent or malformed. */
export function vec3(text: string | undefined, fallback: number[]): number[] {
  if (text === undefined) return fallback;
  const parts = text.trim().split(/\s+/).map(Number);
  return parts.length === 3 && parts.every(Number.isFinite) ? parts : fallback;
}

/** Rotation of URDF roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll). */
export function rpyToMat(out: Float64Array, offset: number, [r = 0, p = 0, y = 0]: number[]): void {
  const cr = Math.cos(r),
    sr = Math.sin(r),
    cp = Math.cos(p),
    sp = Math.sin(p),
    cy = Math.cos(y),
    sy = Math.sin(y);
  out.set(
    [
      cy * cp,
      cy * sp * sr - sy * cr,
      cy * sp * cr + sy * sr,
      sy * cp,
      sy * sp * sr + cy * cr,
      sy * sp * cr - cy * sr,
      -sp,
      cp * sr,
      cp * cr,
    ],
    offset,
  );
}

/** Composes fixed transforms: (pa, Ra) * (pb, Rb) -> (pa + Ra pb, Ra Rb). */
function compose(pa: Float64Array, ra: Float64Array, pb: ArrayLike<number>, rb: ArrayLike<number>): void {
  const p = [0, 1, 2].map(
    (i) =>
      (pa[i] ?? 0) +
      (ra[3 * i] ?? 0) * (pb[0] ?? 0) +
      (ra[3 * i + 1] ?? 0) * (pb[1] ?? 0) +
      (ra[3 * i + 2] ?? 0) * (pb[2] ?? 0),
  );
  const r = Array.from({ length: 9 }, (_, k) => {
    const i = Math.floor(k / 3),
      j = k % 3;
    return (
      (ra[3 * i] ?? 0) * (rb[j] ?? 0) +
      (ra[3 * i + 1] ?? 0) * (rb[3 + j] ?? 0) +
      (ra[3 * i + 2] ?? 0) * (rb[6 + j] ?? 0)
    );
  });
  pa.set(p);
  ra.set(r);
}

/**
 * Extracts the chain from `baseLink` to `tipLink` out of URDF text. The named joints must be
 * the chain's revolute joints, in order; fixed joints between them fold into the origins.
 */
export function chainFromUrdf(
  urdf: string,
  baseLink: string,
  tipLink: string,
  jointNames: readonly string[],
): Result<Chain, string> {
  const joints = urdfJoints(urdf);
  if (!joints.ok) return joints;
  const byChild = new Map<string, RawJoint>();
  for (const joint of joints.value) if (joint.child?.link) byChild.set(joint.child.link, joint);
  const path: RawJoint[] = [];
  for (let link = tipLink; link !== baseLink; ) {
    const joint = byChild.get(link);
    if (!joint?.parent?.link) return err(`URDF has no chain from '${baseLink}' to '${tipLink}' (stuck at '${link}')`);
    path.unshift(joint);
    link = joint.parent.link;
  }
  const n = jointNames.length;
  const chain: Chain = {
    jointNames: [...jointNames],
    originPos: new Float64Array(3 * n),
    originRot: new Float64Array(9 * n),
    axis: new Float64Array(3 * n),
    tipPos: new Float64Array(3),
    tipRot: new Float64Array(9),
  };
  const accPos = new Float64Array(3);
  const accRot = new Float64Array([1, 0, 0, 0, 1, 0, 0, 0, 1]);
  const rot = new Float64Array(9);
  let index = 0;
  for (const joint of path) {
    rpyToMat(rot, 0, vec3(joint.origin?.rpy, [0, 0, 0]));
    compose(accPos, accRot, vec3(joint.origin?.xyz, [0, 0, 0]), rot);
    if (joint.type === 'fixed') continue;
    if (joint.type !== 'revolute' && joint.type !== 'continuous')
      return err(`joint '${joint.name}' is ${joint.type}; only revolute chains are supported`);
    if (joint.name !== jointNames[index])
      return err(`chain joint ${index + 1} is '${joint.name}', expected '${jointNames[index]}'`);
    const a = vec3(joint.axis?.xyz, [1, 0, 0]);
    const norm = Math.hypot(a[0] ?? 0, a[1] ?? 0, a[2] ?? 0);
    chain.originPos.set(accPos, 3 * index);
    chain.originRot.set(accRot, 9 * index);
    chain.axis.set(
      a.map((c) => c / norm),
      3 * index,
    );
    accPos.fill(0);
    accRot.set([1, 0, 0, 0, 1, 0, 0, 0, 1]);
    index++;
  }
  if (index !== n) return err(`chain from '${baseLink}' to '${tipLink}' has ${index} movable joints, expected ${n}`);
  chain.tipPos.set(accPos);
  chain.tipRot.set(accRot);
  return ok(chain);
}

/** The chain with a fixed tool transform (position m, row-major rotation) appended to its tip. */
export function withToolOffset(chain: Chain, toolPos: ArrayLike<number>, toolRot: ArrayLike<number>): Chain {
  const tipPos = Float64Array.from(chain.tipPos);
  const tipRot = Float64Array.from(chain.tipRot);
  compose(tipPos, tipRot, toolPos, toolRot);
  return { ...chain, tipPos, tipRot };
}
