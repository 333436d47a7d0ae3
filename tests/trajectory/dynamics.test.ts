/**
 * lib/planning/dynamics.ts and lib/planning/poly.ts without a server: the execution the
 * controller makes of a trajectory (filled velocities, the start from the current state) and its
 * analytic check against the joint limits, compared with dense sampling of the same spline.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  createSample,
  type JointTrajectory,
  sampleTrajectory,
  segmentCoefficients,
  type TrajectoryPoint,
} from '../../lib/planning/trajectory.ts';
import type { JointLimits } from '../../lib/robot/limits.ts';
import {
  type ArmState,
  describeViolation,
  executedKnots,
  fillVelocities,
  firstViolation,
  type LimitViolation,
  planExecution,
  refreshStart,
} from '../../lib/planning/dynamics.ts';
import { evalPoly, type PolyRange, rangeOn, rootsInside } from '../../lib/planning/poly.ts';
import { bundledLimits, JOINTS, WORK } from '../support/arm.ts';

const ZERO = [0, 0, 0, 0, 0, 0, 0];
const REST: ArmState = { positions: WORK, velocities: ZERO };

// Loaded at the top (not in a top-level hook): the file can share a test process with others (scripts/test-groups.mjs).
const limits: JointLimits = await bundledLimits();

/** WORK with joint1 at `j1` (and `j7` when given), at time `t`. */
const at = (t: number, j1: number, j7 = 0): TrajectoryPoint => ({
  positions: WORK.map((q, j) => (j === 0 ? j1 : j === 6 ? j7 : q)),
  timeFromStartS: t,
});

/** The worst |velocity| and |acceleration| per joint, and the position range, sampling the executed spline every `dt`. */
function sampled(
  knots: readonly TrajectoryPoint[],
  dt = 1e-4,
): { vel: number[]; acc: number[]; min: number[]; max: number[] } {
  const trajectory: JointTrajectory = { jointNames: JOINTS, points: knots };
  const out = createSample(7);
  const end = knots.at(-1)?.timeFromStartS ?? 0;
  const vel = [...ZERO],
    acc = [...ZERO];
  const min = ZERO.map(() => Infinity),
    max = ZERO.map(() => -Infinity);
  for (let t = 0; t <= end; t += dt) {
    sampleTrajectory(trajectory, t, out);
    for (let j = 0; j < 7; j++) {
      vel[j] = Math.max(vel[j] ?? 0, Math.abs(out.qd[j] ?? 0));
      acc[j] = Math.max(acc[j] ?? 0, Math.abs(out.qdd[j] ?? 0));
      min[j] = Math.min(min[j] ?? 0, out.q[j] ?? 0);
      max[j] = Math.max(max[j] ?? 0, out.q[j] ?? 0);
    }
  }
  return { vel, acc, min, max };
}

describe('polynomials on [0, T] (poly.ts)', () => {
  it('finds every real root inside the interval and the extremes, as dense sampling does (degrees 1 to 5)', () => {
    // Coefficients of trajectory-like size (no denormals: their roots are rounding noise).
    const coefficient = fc.double({ min: -10, max: 10, noNaN: true }).map((x) => (Math.abs(x) < 1e-6 ? 0 : x));
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.array(coefficient, { minLength: 6, maxLength: 6 }),
        fc.double({ min: 0.05, max: 3, noNaN: true }),
        (degree, coeffs, T) => {
          const c = Float64Array.from(coeffs);
          for (let k = degree + 1; k < 6; k++) c[k] = 0;
          const roots = new Float64Array(6);
          const n = rootsInside(c, degree, T, roots);
          for (let k = 0; k < n; k++) {
            const s = roots[k] ?? 0;
            assert.ok(s > 0 && s < T);
            if (k > 0) assert.ok(s >= (roots[k - 1] ?? 0), 'ascending');
            const scale = coeffs.reduce((a, x) => a + Math.abs(x), 0) * Math.max(1, T) ** degree;
            assert.ok(Math.abs(evalPoly(c, degree, s)) <= 1e-9 * scale, `p(${s}) = ${evalPoly(c, degree, s)}`);
          }
          const range: PolyRange = { min: 0, minAtS: 0, max: 0, maxAtS: 0 };
          rangeOn(c, degree, T, range);
          let lo = Infinity,
            hi = -Infinity;
          for (let k = 0; k <= 2000; k++) {
            const value = evalPoly(c, degree, (T * k) / 2000);
            lo = Math.min(lo, value);
            hi = Math.max(hi, value);
          }
          const tol = 1e-6 * (1 + Math.abs(hi) + Math.abs(lo));
          assert.ok(
            range.min <= lo + tol && range.max >= hi - tol,
            `range [${range.min}, ${range.max}] vs sampled [${lo}, ${hi}]`,
          );
          assert.ok(
            Math.abs(evalPoly(c, degree, range.minAtS) - range.min) <= tol &&
              Math.abs(evalPoly(c, degree, range.maxAtS) - range.max) <= tol,
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it('segmentCoefficients gives the polynomial sampleTrajectory interpolates (linear, cubic, quintic)', () => {
    const a: TrajectoryPoint = {
      positions: [0.1, 0.2],
      velocities: [0.5, -0.3],
      accelerations: [1, -2],
      timeFromStartS: 1,
    };
    const b: TrajectoryPoint = {
      positions: [0.4, -0.1],
      velocities: [-0.2, 0.1],
      accelerations: [0.5, 3],
      timeFromStartS: 1.8,
    };
    const cases: [string, TrajectoryPoint, TrajectoryPoint, number][] = [
      ['linear', { positions: a.positions, timeFromStartS: 1 }, { positions: b.positions, timeFromStartS: 1.8 }, 1],
      [
        'cubic',
        { positions: a.positions, velocities: a.velocities ?? [], timeFromStartS: 1 },
        { positions: b.positions, velocities: b.velocities ?? [], timeFromStartS: 1.8 },
        3,
      ],
      ['quintic', a, b, 5],
    ];
    for (const [name, p0, p1, degree] of cases) {
      const c = new Float64Array(6);
      for (let j = 0; j < 2; j++) {
        assert.equal(segmentCoefficients(p0, p1, j, c), degree, name);
        const out = createSample(2);
        for (const s of [0.1, 0.4, 0.77]) {
          sampleTrajectory({ jointNames: ['a', 'b'], points: [p0, p1] }, 1 + s, out);
          assert.ok(Math.abs(evalPoly(c, degree, s) - (out.q[j] ?? 0)) < 1e-12, `${name} joint ${j} at ${s}`);
        }
      }
    }
  });

  it('samples every joint of a segment last sampled for fewer joints', () => {
    const trajectory: JointTrajectory = {
      jointNames: ['a', 'b', 'c'],
      points: [
        { positions: [0, 0, 0], velocities: [0, 0, 0], timeFromStartS: 0 },
        { positions: [1, 1, 1], velocities: [0, 0, 0], timeFromStartS: 1 },
        { positions: [3, 2, -1], velocities: [1, 1, 1], timeFromStartS: 2 },
      ],
    };
    const all = createSample(3);
    sampleTrajectory(trajectory, 0.5, all);
    assert.deepEqual(Array.from(all.q), [0.5, 0.5, 0.5]);
    sampleTrajectory(trajectory, 1.5, createSample(1));
    sampleTrajectory(trajectory, 1.5, all);
    assert.deepEqual(Array.from(all.q), [1.875, 1.375, -0.125]);
  });

  it('samples a time the same whatever was sampled before (another trajectory, another segment, fewer joints)', () => {
    const values = (n: number) => fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: n, maxLength: n });
    const point = (kind: number) =>
      fc.tuple(values(3), values(3), values(3), fc.double({ min: 0.05, max: 1, noNaN: true })).map(([p, v, a, dt]) => ({
        dt,
        point: { positions: p, ...(kind > 0 ? { velocities: v } : {}), ...(kind > 1 ? { accelerations: a } : {}) },
      }));
    const trajectory = fc
      .integer({ min: 0, max: 2 })
      .chain((kind) => fc.array(point(kind), { minLength: 2, maxLength: 5 }))
      .map((raw): JointTrajectory => {
        let t = 0;
        const points = raw.map(({ dt, point: p }, k) => {
          if (k > 0) t += dt;
          return { ...p, timeFromStartS: t };
        });
        return { jointNames: ['a', 'b', 'c'], points };
      });
    /** The polynomial's value, found without sampleTrajectory: the segment by a scan, then segmentCoefficients. */
    const expected = (tr: JointTrajectory, t: number, j: number): number => {
      const points = tr.points;
      const end = points.at(-1) as TrajectoryPoint;
      if (t >= end.timeFromStartS) return end.positions[j] ?? 0;
      if (t <= (points[0]?.timeFromStartS ?? 0)) return points[0]?.positions[j] ?? 0;
      let i = 0;
      while ((points[i + 1]?.timeFromStartS ?? 0) <= t) i++;
      const a = points[i] as TrajectoryPoint;
      const c = new Float64Array(6);
      const degree = segmentCoefficients(a, points[i + 1] as TrajectoryPoint, j, c);
      return evalPoly(c, degree, t - a.timeFromStartS);
    };
    fc.assert(
      fc.property(
        fc.array(trajectory, { minLength: 1, maxLength: 3 }),
        fc.array(fc.tuple(fc.nat(), fc.double({ min: 0, max: 2, noNaN: true }), fc.integer({ min: 1, max: 3 })), {
          minLength: 1,
          maxLength: 40,
        }),
        (trajectories, steps) => {
          // In steps forward and back from the last time: the same segment, the next, an earlier one, another's.
          let t = 0;
          for (const [which, dt, n] of steps) {
            t = Math.max(-0.1, t + dt - 1);
            const tr = trajectories[which % trajectories.length] as JointTrajectory;
            // `n` joints, then all three at the same time.
            for (const joints of [n, 3]) {
              const out = createSample(joints);
              sampleTrajectory(tr, t, out);
              for (let j = 0; j < joints; j++) {
                const want = expected(tr, t, j);
                assert.ok(Math.abs((out.q[j] ?? 0) - want) <= 1e-9 * (1 + Math.abs(want)), `joint ${j} at ${t}`);
              }
            }
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('samples exactly as a binary search over the same points does, whatever came before (orders, boundaries, edits in place)', () => {
    /**
     * The sampler as it was before it kept the last segment: the segment by a plain binary search, every joint's
     * polynomial computed again at each sample, the same arithmetic. Every value compared exactly (Object.is).
     */
    const reference = (
      points: readonly TrajectoryPoint[],
      t: number,
      out: { q: Float64Array; qd: Float64Array; qdd: Float64Array },
    ) => {
      const n = out.q.length;
      const first = points[0];
      const final = points.at(-1);
      if (!first || !final) return;
      const hold = (p: TrajectoryPoint, keep: boolean) => {
        for (let j = 0; j < n; j++) {
          out.q[j] = p.positions[j] ?? 0;
          out.qd[j] = keep ? (p.velocities?.[j] ?? 0) : 0;
          out.qdd[j] = keep ? (p.accelerations?.[j] ?? 0) : 0;
        }
      };
      if (t <= first.timeFromStartS || points.length === 1) {
        hold(t <= first.timeFromStartS ? first : final, t <= first.timeFromStartS && points.length > 1);
        return;
      }
      if (t >= final.timeFromStartS) {
        hold(final, false);
        return;
      }
      let lo = 0;
      let hi = points.length - 1;
      while (hi - lo > 1) {
        const mid = (lo + hi) >> 1;
        if ((points[mid] as TrajectoryPoint).timeFromStartS <= t) lo = mid;
        else hi = mid;
      }
      const a = points[lo] as TrajectoryPoint;
      const b = points[lo + 1] as TrajectoryPoint;
      const T = b.timeFromStartS - a.timeFromStartS;
      const s = t - a.timeFromStartS;
      const c = new Float64Array(6);
      for (let j = 0; j < n; j++) {
        const degree = segmentCoefficients(a, b, j, c);
        const [c0, c1, c2, c3, c4, c5] = c as unknown as [number, number, number, number, number, number];
        if (degree === 1) {
          const p0 = a.positions[j] ?? 0;
          const p1 = b.positions[j] ?? 0;
          out.q[j] = T > 0 ? p0 + ((p1 - p0) * s) / T : p1;
          out.qd[j] = T > 0 ? (p1 - p0) / T : 0;
          out.qdd[j] = 0;
        } else if (degree === 3) {
          out.q[j] = c0 + c1 * s + c2 * s * s + c3 * s * s * s;
          out.qd[j] = c1 + 2 * c2 * s + 3 * c3 * s * s;
          out.qdd[j] = 2 * c2 + 6 * c3 * s;
        } else {
          out.q[j] = c0 + s * (c1 + s * (c2 + s * (c3 + s * (c4 + s * c5))));
          out.qd[j] = c1 + s * (2 * c2 + s * (3 * c3 + s * (4 * c4 + s * 5 * c5)));
          out.qdd[j] = 2 * c2 + s * (6 * c3 + s * (12 * c4 + s * 20 * c5));
        }
      }
    };
    // Gaps between points: none (two points at one time), tiny ones down to 1e-100, and ordinary ones.
    const gap = fc.oneof(
      fc.constantFrom(0, 1e-100, 1e-15, 1e-9, 1e-6, 5e-324),
      fc.double({ min: 1e-3, max: 2, noNaN: true }),
    );
    const value = fc.oneof(fc.constantFrom(0, -0, 1e-100, -3), fc.double({ min: -3, max: 3, noNaN: true }));
    const values = fc.array(value, { minLength: 0, maxLength: 8 });
    // Each point its own kind (positions only, with velocities, with accelerations too): segments of every degree.
    const point = fc.record({ p: values, v: fc.option(values), a: fc.option(values), dt: gap });
    const makePoint = (raw: { p: number[]; v: number[] | null; a: number[] | null }, t: number): TrajectoryPoint => ({
      positions: raw.p,
      ...(raw.v ? { velocities: raw.v } : {}),
      ...(raw.a ? { accelerations: raw.a } : {}),
      timeFromStartS: t,
    });
    const trajectory = fc
      .tuple(fc.constantFrom(0, 0.5, -1, 1e-100), fc.array(point, { minLength: 1, maxLength: 7 }))
      .map(([start, raw]) => {
        let t = start;
        return raw.map((r, k) => {
          if (k > 0) t += r.dt;
          return makePoint(r, t);
        });
      });
    /** What happens next: a sample (of which trajectory, where, for how many joints) or an edit of a points array. */
    const step = fc.oneof(
      {
        weight: 8,
        arbitrary: fc.record({
          kind: fc.constant('sample' as const),
          which: fc.nat(),
          // at a point's time exactly, just before or after it, between it and the next, before the start, after the end,
          // or the time of the last sample again
          where: fc.constantFrom('at', 'below', 'above', 'between', 'before', 'after', 'again'),
          index: fc.nat(),
          fraction: fc.double({ min: 0, max: 1, noNaN: true }),
          joints: fc.integer({ min: 0, max: 9 }),
        }),
      },
      {
        weight: 2,
        arbitrary: fc.record({
          kind: fc.constant('edit' as const),
          which: fc.nat(),
          // a point replaced in place by one differing in one value, its time moved within its neighbours', a point
          // added at the end, or a copy of the array sharing every point but one (a trajectory differing in one point)
          how: fc.constantFrom('value', 'time', 'push', 'copy'),
          index: fc.nat(),
          joint: fc.nat({ max: 7 }),
          to: value,
          fraction: fc.double({ min: 0, max: 1, noNaN: true }),
        }),
      },
    );
    fc.assert(
      fc.property(
        fc.array(trajectory, { minLength: 1, maxLength: 3 }),
        fc.array(step, { minLength: 1, maxLength: 60 }),
        (arrays, steps) => {
          /** Samples `points` at `t` for `joints` joints and compares every value with the binary search's. */
          const check = (points: readonly TrajectoryPoint[], t: number, joints: number, what: string) => {
            const got = createSample(joints);
            const want = createSample(joints);
            for (const sample of [got, want]) for (const v of [sample.q, sample.qd, sample.qdd]) v.fill(12345);
            sampleTrajectory({ jointNames: [], points }, t, got);
            reference(points, t, want);
            for (const key of ['q', 'qd', 'qdd'] as const)
              for (let j = 0; j < joints; j++)
                assert.ok(
                  Object.is(got[key][j], want[key][j]),
                  `${key}[${j}] at ${t} (${what}, ${points.length} points): ${got[key][j]}, a binary search gives ${want[key][j]}`,
                );
          };
          let last = 0;
          for (const s of steps) {
            const points = arrays[s.which % arrays.length] as TrajectoryPoint[];
            const i = s.index % points.length;
            const p = points[i] as TrajectoryPoint;
            const next = points[i + 1];
            if (s.kind === 'edit') {
              // The segments on either side of the point, sampled before the edit and again after it (the same times).
              const around = (k: number) => {
                const from = points[k];
                const to = points[k + 1];
                return from && to ? from.timeFromStartS + (to.timeFromStartS - from.timeFromStartS) * s.fraction : 0;
              };
              const times = [around(i - 1), around(i), p.timeFromStartS];
              for (const t of times) check(points, t, 8, `before the ${s.how} edit of point ${i}`);
              if (s.how === 'push') {
                points.push({
                  ...p,
                  positions: [...p.positions, s.to],
                  timeFromStartS: (points.at(-1) as TrajectoryPoint).timeFromStartS + s.fraction,
                });
              } else if (s.how === 'copy') {
                arrays.push(
                  points.map((q, k) =>
                    k === i ? { ...q, positions: q.positions.map((x, j) => (j === s.joint ? s.to : x)) } : q,
                  ),
                );
              } else if (s.how === 'value') {
                const field = [p.positions, p.velocities, p.accelerations][s.joint % 3] ?? p.positions;
                const changed = field.map((x, j) => (j === s.joint % Math.max(1, field.length) ? s.to : x));
                points[i] =
                  s.joint % 3 === 0
                    ? { ...p, positions: changed }
                    : s.joint % 3 === 1
                      ? { ...p, velocities: changed }
                      : { ...p, accelerations: changed };
              } else {
                const lo = points[i - 1]?.timeFromStartS ?? p.timeFromStartS - 1;
                const hi = next?.timeFromStartS ?? p.timeFromStartS + 1;
                points[i] = { ...p, timeFromStartS: Math.min(hi, Math.max(lo, lo + (hi - lo) * s.fraction)) };
              }
              for (const t of times) check(points, t, 8, `after the ${s.how} edit of point ${i}`);
              continue;
            }
            const first = (points[0] as TrajectoryPoint).timeFromStartS;
            const end = (points.at(-1) as TrajectoryPoint).timeFromStartS;
            const t =
              s.where === 'at'
                ? p.timeFromStartS
                : s.where === 'below'
                  ? p.timeFromStartS - Math.max(Number.MIN_VALUE, Math.abs(p.timeFromStartS) * Number.EPSILON)
                  : s.where === 'above'
                    ? p.timeFromStartS + Math.max(Number.MIN_VALUE, Math.abs(p.timeFromStartS) * Number.EPSILON)
                    : s.where === 'between'
                      ? p.timeFromStartS + ((next?.timeFromStartS ?? p.timeFromStartS) - p.timeFromStartS) * s.fraction
                      : s.where === 'before'
                        ? first - s.fraction
                        : s.where === 'after'
                          ? end + s.fraction
                          : last;
            last = t;
            check(points, t, s.joints, `${s.where} point ${i}`);
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe('filled velocities (what armgate publishes with validate_limits)', () => {
  it('uses the time-weighted three-point estimate of the neighbouring slopes, starting from the current position', () => {
    // joint1: 0 (now) -> 0.1 at 1 s -> 0.4 at 1.5 s -> 0.5 at 3.5 s; joint7 stays.
    const filled = fillVelocities(REST, [at(1, 0.1), at(1.5, 0.4), at(3.5, 0.5)]);
    const v = filled.map((p) => p.velocities?.[0] ?? Number.NaN);
    const estimate = (h0: number, d0: number, h1: number, d1: number) => (h1 * d0 + h0 * d1) / (h0 + h1);
    assert.ok(Math.abs((v[0] ?? 0) - estimate(1, 0.1, 0.5, 0.6)) < 1e-12, `point 0: ${v[0]}`);
    assert.ok(Math.abs((v[1] ?? 0) - estimate(0.5, 0.6, 2, 0.05)) < 1e-12, `point 1: ${v[1]}`);
    assert.equal(v[2], 0, 'the last point is at rest');
    assert.ok(
      filled.every((p) => p.velocities?.slice(1).every((x) => x === 0)),
      'joints that do not move get 0',
    );
  });

  it('gives 0 where the slope changes sign or is flat on one side, so the spline does not overshoot a turning point', () => {
    const filled = fillVelocities(REST, [at(1, 0.3), at(2, 0.1), at(3, 0.1), at(4, 0.2)]);
    assert.deepEqual(
      filled.map((p) => p.velocities?.[0]),
      [0, 0, 0, 0],
    );
    const knots = executedKnots(REST, filled).knots;
    const { min, max } = sampled(knots);
    assert.ok(
      (max[0] ?? 0) <= 0.3 + 1e-12 && (min[0] ?? 0) >= -1e-12,
      `joint1 stays within the points' span: [${min[0]}, ${max[0]}]`,
    );
  });

  it("takes the arm's current velocity for a first point at t = 0, and keeps velocities a point already has", () => {
    const moving: ArmState = { positions: WORK, velocities: [0.2, 0, 0, 0, 0, 0, -0.1] };
    const given = [0.3, 0, 0, 0, 0, 0, 0];
    const filled = fillVelocities(moving, [at(0, 0), { ...at(1, 0.2), velocities: given }, at(2, 0.3)]);
    assert.deepEqual(filled[0]?.velocities, moving.velocities);
    assert.equal(filled[1]?.velocities, given);
  });

  it('prepends the current state (with its velocities) when the first point is later than t = 0, as JTC does', () => {
    const moving: ArmState = {
      positions: WORK.map((q, j) => (j === 0 ? 0.2 : q)),
      velocities: [0.5, 0, 0, 0, 0, 0, 0],
    };
    const filled = fillVelocities(moving, [at(1, 0.6)]);
    const executed = executedKnots(moving, filled);
    assert.equal(executed.offset, 1);
    assert.deepEqual(executed.knots[0], {
      positions: moving.positions,
      velocities: moving.velocities,
      timeFromStartS: 0,
    });
    assert.equal(executedKnots(moving, [at(0, 0.2), at(1, 0.6)]).offset, 0);
  });
});

describe('the execution check', () => {
  const moving = (j1: number, v1: number): ArmState => ({
    positions: WORK.map((q, j) => (j === 0 ? j1 : q)),
    velocities: [v1, 0, 0, 0, 0, 0, 0],
  });
  const zigzag = Array.from({ length: 10 }, (_, i) => at(0.02 * (i + 1), i % 2 ? 0.05 : 0));
  const cases: {
    name: string;
    state: ArmState;
    points: TrajectoryPoint[];
    expect: Partial<LimitViolation> & { msg?: string };
  }[] = [
    {
      name: 'a jump from rest: joint1 to 1.7 rad at t = 1 s',
      state: REST,
      points: [at(1, 1.7)],
      expect: {
        point: 0,
        joint: 0,
        quantity: 'acceleration',
        msg: 'point 0: joint1 would need 10.2 rad/s^2 (limit 8.5521) between t = 0 and 1 s: add time or points',
      },
    },
    {
      name: 'a zig-zag every 20 ms',
      state: REST,
      points: zigzag,
      expect: {
        point: 1,
        joint: 0,
        quantity: 'acceleration',
        msg: 'point 1: joint1 would need 750 rad/s^2 (limit 8.5521) between t = 0.02 and 0.04 s: add time or points',
      },
    },
    {
      name: 'a reversal sent while joint1 moves at 0.75 rad/s',
      state: moving(0.5, 0.75),
      points: [at(0.3, 0.45), at(1, 0.3)],
      expect: { point: 0, joint: 0, quantity: 'acceleration' },
    },
    {
      name: 'a first point at t = 0 away from the current position',
      state: REST,
      points: [at(0, 0.3), at(1, 0.3)],
      expect: {
        point: 0,
        joint: 0,
        quantity: 'jump',
        msg: 'point 0: joint1 is at t = 0 but 0.3 rad from the current position: the arm would jump; give the first point a time after 0',
      },
    },
    {
      name: 'a segment faster than the velocity limit in the middle of an otherwise slow trajectory',
      state: REST,
      points: [at(2, 0.1), at(3, 2.2), at(5, 2.3)],
      expect: { point: 1, joint: 0 },
    },
  ];
  for (const c of cases) {
    it(`refuses ${c.name}, and the figure is what dense sampling of the same spline finds`, () => {
      const plan = planExecution(c.state, c.points, limits, true);
      const v = plan.violation;
      assert.ok(v, 'a violation');
      const { msg, ...fields } = c.expect;
      for (const [key, value] of Object.entries(fields))
        assert.equal(v[key as keyof LimitViolation], value, `${key}: ${describeViolation(v, limits)}`);
      if (msg) assert.equal(describeViolation(v, limits), msg);
      if (v.quantity === 'jump') return;
      // The figure is the extreme of the segment it names.
      const knots = executedKnots(c.state, plan.points).knots.filter(
        (p) => p.timeFromStartS >= v.fromS - 1e-12 && p.timeFromStartS <= v.toS + 1e-12,
      );
      const s = sampled(knots, 1e-5);
      const seen =
        v.quantity === 'acceleration' ? s.acc[v.joint] : v.quantity === 'velocity' ? s.vel[v.joint] : Number.NaN;
      assert.ok(
        Math.abs((seen ?? 0) - v.value) <= 1e-3 * v.value,
        `${v.quantity}: sampled ${seen}, reported ${v.value}`,
      );
    });
  }

  it('accepts a feasible trajectory, and dense sampling of its execution stays within every limit', () => {
    const plan = planExecution(REST, [at(1, 0.1, 0.05), at(2, 0.25, 0.1), at(3, 0.4, 0.2)], limits, true);
    assert.equal(plan.violation, undefined);
    const s = sampled(executedKnots(REST, plan.points).knots);
    for (let j = 0; j < 7; j++) {
      assert.ok(
        (s.vel[j] ?? 0) <= (limits.maxVelRadS[j] ?? 0) && (s.acc[j] ?? 0) <= (limits.maxAccRadS2[j] ?? 0),
        JOINTS[j],
      );
    }
  });

  it('finds a cubic that overshoots a position limit between points (given velocities), naming the bound', () => {
    // joint2 ends at 2.0 rad (limit 2.1) arriving at 1 rad/s: the cubic overshoots past 2.1 before coming back.
    const points: TrajectoryPoint[] = [
      { positions: [0, 1.8, 0, -1.57, 0, 1.57, 0], velocities: [0, 1.2, 0, 0, 0, 0, 0], timeFromStartS: 1 },
      { positions: [0, 2.0, 0, -1.57, 0, 1.57, 0], velocities: [0, -1.2, 0, 0, 0, 0, 0], timeFromStartS: 1.6 },
    ];
    const state: ArmState = { positions: [0, 1.4, 0, -1.57, 0, 1.57, 0], velocities: [0, 0.8, 0, 0, 0, 0, 0] };
    const v = firstViolation(executedKnots(state, points), state, limits, { quantities: new Set(['position']) });
    assert.ok(v);
    assert.equal(v.quantity, 'position');
    assert.equal(v.joint, 1);
    assert.equal(v.limit, 2.1);
    assert.match(
      describeViolation(v, limits),
      /^point 1: joint2 would reach 2\.\d+ rad between t = 1 and 1\.6 s, outside its limits \[-2\.1, 2\.1\]/,
    );
  });

  it('sees the velocity steps of positions-only points (linear interpolation) when they are published as given', () => {
    const plan = planExecution(REST, [at(1, 0.5), at(2, 0.5)], limits, false);
    const v = plan.violation;
    assert.ok(v);
    assert.equal(v.quantity, 'velocity step');
    assert.equal(v.point, 0);
    assert.equal(v.value, 0.5);
    assert.match(describeViolation(v, limits), /joint1 would change velocity by 0\.5 rad\/s at once at t = 0 s/);
  });

  it('checks only the given segments on request, taking the velocity before them from the previous segment', () => {
    const filled = fillVelocities(REST, [at(1, 0.1), at(2, 0.3), at(2.05, 0.8)]);
    const knots = executedKnots(REST, filled);
    const all = firstViolation(knots, REST, limits);
    assert.ok(all && all.point > 0, 'the violation is after the first segment');
    // Knot k ends the segment into requested point k - 1 (the current state is knot 0).
    const into = all.point + knots.offset;
    assert.equal(firstViolation(knots, REST, limits, { segments: { from: 1, to: into } }), undefined);
    assert.deepEqual(firstViolation(knots, REST, limits, { segments: { from: into, to: into + 1 } }), all);
    assert.deepEqual(firstViolation(knots, REST, limits, { segments: { from: into, to: knots.knots.length } }), all);
  });

  it('re-derives the first point from a newer state and re-checks the start (refreshStart)', () => {
    const plan = planExecution(REST, [at(0.5, 0.05), at(1, 0.1)], limits, true);
    assert.equal(plan.violation, undefined);
    const same = refreshStart(REST, plan.points, limits);
    assert.equal(same.violation, undefined);
    assert.deepEqual(same.first.velocities, plan.points[0]?.velocities);
    // Meanwhile joint1 picked up 1.5 rad/s the other way: the start is now infeasible.
    const reversed = refreshStart(moving(0, -1.5), plan.points, limits);
    assert.equal(reversed.violation?.quantity, 'acceleration');
    assert.equal(reversed.violation?.point, 0);
  });

  it('names CSV rows through its label', () => {
    const v = planExecution(REST, [at(1, 1.7)], limits, true).violation;
    assert.ok(v);
    assert.match(
      describeViolation(v, limits, (i) => `row ${i + 2}`),
      /^row 2: joint1 would need 10\.2 rad\/s\^2/,
    );
  });

  it('finds nothing in any plan whose dense sampling stays within the limits, and something in any plan whose sampling does not', () => {
    const knot = fc.record({
      dt: fc.double({ min: 0.05, max: 1.5, noNaN: true }),
      dq: fc.double({ min: -0.6, max: 0.6, noNaN: true }),
    });
    fc.assert(
      fc.property(
        fc.array(knot, { minLength: 1, maxLength: 6 }),
        fc.double({ min: -1, max: 1, noNaN: true }),
        (steps, v0) => {
          const state: ArmState = { positions: WORK, velocities: [v0, 0, 0, 0, 0, 0, 0] };
          let t = 0;
          let q = 0;
          const points = steps.map(({ dt, dq }) => {
            t += dt;
            q = Math.max(-2.9, Math.min(2.9, q + dq));
            return at(t, q);
          });
          const plan = planExecution(state, points, limits, true);
          const s = sampled(executedKnots(state, plan.points).knots, 2e-4);
          const over =
            (s.vel[0] ?? 0) > (limits.maxVelRadS[0] ?? 0) * 1.0001 ||
            (s.acc[0] ?? 0) > (limits.maxAccRadS2[0] ?? 0) * 1.0001;
          const within =
            (s.vel[0] ?? 0) < (limits.maxVelRadS[0] ?? 0) * 0.999 &&
            (s.acc[0] ?? 0) < (limits.maxAccRadS2[0] ?? 0) * 0.999;
          if (over) assert.ok(plan.violation, `sampled ${s.vel[0]} rad/s, ${s.acc[0]} rad/s^2 but no violation`);
          if (within)
            assert.equal(plan.violation, undefined, plan.violation && describeViolation(plan.violation, limits));
        },
      ),
      { numRuns: 300 },
    );
  });
});
