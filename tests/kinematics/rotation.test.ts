import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  abcFromMat,
  abcFromQuat,
  matFromAbc,
  matFromQuat,
  quatFromAbc,
  quatFromMat,
} from '../../lib/kinematics/rotation.ts';

const angle = fc.double({ min: -Math.PI, max: Math.PI, noNaN: true });
const halfPi = fc.double({ min: -Math.PI / 2, max: Math.PI / 2, noNaN: true });

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs((a[i] ?? 0) - (b[i] ?? 0)));
  return worst;
}

describe('KUKA ABC angles and quaternions', () => {
  it('builds R = Rz(A) Ry(B) Rx(C) for single-axis angles', () => {
    const rz = matFromAbc(new Float64Array(9), Math.PI / 2, 0, 0);
    assert.ok(maxDiff(rz, [0, -1, 0, 1, 0, 0, 0, 0, 1]) < 1e-12, 'A turns about Z');
    const ry = matFromAbc(new Float64Array(9), 0, Math.PI / 2, 0);
    assert.ok(maxDiff(ry, [0, 0, 1, 0, 1, 0, -1, 0, 0]) < 1e-12, 'B turns about Y');
    const rx = matFromAbc(new Float64Array(9), 0, 0, Math.PI / 2);
    assert.ok(maxDiff(rx, [1, 0, 0, 0, 0, -1, 0, 1, 0]) < 1e-12, 'C turns about X');
  });

  it('applies A first (outermost), then B, then C', () => {
    const a = 0.3,
      b = -0.4,
      c = 0.5;
    const rz = matFromAbc(new Float64Array(9), a, 0, 0);
    const ry = matFromAbc(new Float64Array(9), 0, b, 0);
    const rx = matFromAbc(new Float64Array(9), 0, 0, c);
    const mul = (p: Float64Array, q: Float64Array) =>
      Float64Array.from({ length: 9 }, (_, k) => {
        const i = Math.floor(k / 3),
          j = k % 3;
        return (
          (p[3 * i] ?? 0) * (q[j] ?? 0) + (p[3 * i + 1] ?? 0) * (q[3 + j] ?? 0) + (p[3 * i + 2] ?? 0) * (q[6 + j] ?? 0)
        );
      });
    assert.ok(maxDiff(matFromAbc(new Float64Array(9), a, b, c), mul(mul(rz, ry), rx)) < 1e-12);
  });

  it('recovers ABC from its matrix away from gimbal lock', () => {
    fc.assert(
      fc.property(angle, fc.double({ min: -1.5, max: 1.5, noNaN: true }), angle, (a, b, c) => {
        const abc = abcFromMat(matFromAbc(new Float64Array(9), a, b, c));
        const back = matFromAbc(new Float64Array(9), abc.a, abc.b, abc.c);
        return maxDiff(back, matFromAbc(new Float64Array(9), a, b, c)) < 1e-9 && Math.abs(abc.b - b) < 1e-9;
      }),
      { numRuns: 2000 },
    );
  });

  it('gives an ABC triple of the same rotation at gimbal lock', () => {
    for (const b of [Math.PI / 2, -Math.PI / 2]) {
      const m = matFromAbc(new Float64Array(9), 0.7, b, -0.2);
      const abc = abcFromMat(m);
      assert.equal(abc.c, 0);
      assert.ok(maxDiff(matFromAbc(new Float64Array(9), abc.a, abc.b, abc.c), m) < 1e-9);
    }
  });

  it('round-trips ABC -> quaternion -> ABC as the same rotation, with a unit quaternion and w >= 0', () => {
    fc.assert(
      fc.property(angle, halfPi, angle, (a, b, c) => {
        const q = quatFromAbc({ a, b, c });
        const norm = Math.hypot(q.x, q.y, q.z, q.w);
        const back = abcFromQuat(q);
        const same = maxDiff(
          matFromAbc(new Float64Array(9), back.a, back.b, back.c),
          matFromAbc(new Float64Array(9), a, b, c),
        );
        return Math.abs(norm - 1) < 1e-12 && q.w >= 0 && same < 1e-9;
      }),
      { numRuns: 2000 },
    );
  });

  it('round-trips quaternion -> matrix -> quaternion up to sign', () => {
    const component = fc.double({ min: -1, max: 1, noNaN: true });
    fc.assert(
      fc.property(component, component, component, component, (x, y, z, w) => {
        fc.pre(Math.hypot(x, y, z, w) > 1e-3);
        const n = Math.hypot(x, y, z, w) * (w < 0 ? -1 : 1);
        const q = quatFromMat(matFromQuat(new Float64Array(9), { x, y, z, w }));
        const err = Math.max(
          Math.abs(q.x - x / n),
          Math.abs(q.y - y / n),
          Math.abs(q.z - z / n),
          Math.abs(q.w - w / n),
        );
        // w = 0 leaves the overall sign free; compare the rotations then.
        return err < 1e-9 || Math.abs(w) < 1e-9;
      }),
      { numRuns: 2000 },
    );
  });
});
