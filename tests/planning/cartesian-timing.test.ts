import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Chain } from '../../lib/kinematics/chain.ts';
import { createFkWorkspace, forwardKinematics } from '../../lib/kinematics/fk.ts';
import { minSingularValue6 } from '../../lib/kinematics/linalg.ts';
import { quatAngle, quatFromMat } from '../../lib/kinematics/rotation.ts';
import {
  arcPath,
  type CartesianPath,
  linePath,
  planCartesian,
  planCartesianSteps,
  tcpPose,
} from '../../lib/planning/cartesian.ts';
import { sampleJointPath } from '../../lib/planning/joint-path.ts';
import { effectiveAccelScale, type MotionScales, scaledJointLimits } from '../../lib/planning/limits.ts';
import { solveTopp } from '../../lib/planning/topp.ts';
import {
  createSample,
  type JointTrajectory,
  sampleTrajectory,
  trajectoryDuration,
} from '../../lib/planning/trajectory.ts';
import type { JointLimits } from '../../lib/robot/limits.ts';
import { bundledChain, bundledLimits, JOINTS } from '../support/arm.ts';

/** The start of issue 13's observation: LIN 15 cm at speed 1.0 from here was refused for joint1's acceleration. */
const BENT = [0, 0.4, 0, -1.4, 0, 1.3, 0];
const options = { nowMs: () => performance.now() };

// Loaded at the top (not in a top-level hook): the file can share a test process with others (scripts/test-groups.mjs).
const limits: JointLimits = await bundledLimits();
const chain: Chain = await bundledChain();

/** Uniform in [0, 1]. */
const uniform = fc.noBias(fc.integer({ min: 0, max: 1_000_000 })).map((k) => k / 1_000_000);

/** A random direction scaled to `lengthM`. */
const offset = (lengthM: number) =>
  fc.tuple(uniform, uniform, uniform).map(([x, y, z]) => {
    const d = [x - 0.5, y - 0.5, z - 0.5];
    const n = Math.hypot(...d) || 1;
    return d.map((v) => (v / n) * lengthM);
  });

/** Distance from p to the segment a-b. */
function distanceToSegment(p: ArrayLike<number>, a: readonly number[], b: readonly number[]): number {
  const ab = [0, 1, 2].map((k) => (b[k] ?? 0) - (a[k] ?? 0));
  const ap = [0, 1, 2].map((k) => (p[k] ?? 0) - (a[k] ?? 0));
  const len2 = ab.reduce((s, v) => s + v * v, 0);
  const u = len2 > 0 ? Math.min(1, Math.max(0, ab.reduce((s, v, k) => s + v * (ap[k] ?? 0), 0) / len2)) : 0;
  return Math.hypot(...[0, 1, 2].map((k) => (ap[k] ?? 0) - u * (ab[k] ?? 0)));
}

/**
 * Samples the trajectory every 1 ms as the controller interpolates it and checks every joint
 * position, velocity and acceleration against the limits (velocity and acceleration scaled);
 * calls `visit` with the TCP position of each sample. 1e-9 relative: rounding.
 */
function checkSamples(trajectory: JointTrajectory, scales: MotionScales, visit: (p: Float64Array) => void): void {
  const { vMax, aMax } = scaledJointLimits(limits, scales);
  const ws = createFkWorkspace(chain);
  const sample = createSample(7);
  const duration = trajectoryDuration(trajectory);
  const steps = Math.ceil(duration / 0.001);
  for (let k = 0; k <= steps; k++) {
    const t = Math.min(duration, k * 0.001);
    sampleTrajectory(trajectory, t, sample);
    for (let j = 0; j < 7; j++) {
      const q = sample.q[j] ?? 0;
      const v = Math.abs(sample.qd[j] ?? 0);
      const a = Math.abs(sample.qdd[j] ?? 0);
      if (q < (limits.minRad[j] ?? 0) - 1e-9 || q > (limits.maxRad[j] ?? 0) + 1e-9)
        assert.fail(`${JOINTS[j]} at ${q} rad beyond its limits at t = ${t} s`);
      if (v > (vMax[j] ?? 0) * (1 + 1e-9)) assert.fail(`${JOINTS[j]} at ${v} rad/s > ${vMax[j]} at t = ${t} s`);
      if (a > (aMax[j] ?? 0) * (1 + 1e-9)) assert.fail(`${JOINTS[j]} at ${a} rad/s^2 > ${aMax[j]} at t = ${t} s`);
    }
    forwardKinematics(chain, sample.q, ws);
    visit(ws.tipPos);
  }
}

/**
 * An independent fine-grid reference of the optimal duration: the joint path sampled 10 times
 * finer, dq/ds and d2q/ds2 by central differences, and the classic phase-plane integration
 * (Bobrow): the maximum velocity curve from the velocity and acceleration limits, a backward
 * integration at the largest deceleration from rest at the end, a forward one at the largest
 * acceleration from rest at the start, the lower of the two.
 */
function referenceDuration(pathIn: CartesianPath, start: readonly number[], scales: MotionScales): number {
  const sampled = planToEnd(
    sampleJointPath(chain, limits, pathIn, start, { ...options, maxStepM: 1e-4, maxStepRad: 1e-3 }),
  );
  assert.ok(sampled.ok, 'the reference path samples');
  const { s, q } = sampled.value;
  const N = s.length - 1;
  const { vMax, aMax } = scaledJointLimits(limits, scales);
  const c = limits.cartesian;
  const acc = effectiveAccelScale(scales);
  const L = pathIn.lengthM;
  const th = pathIn.angleRad;
  const per = (lin: number, rot: number) => Math.min(L > 1e-9 ? lin / L : Infinity, th > 1e-9 ? rot / th : Infinity);
  const vS = per(c.maxTransVelMS * scales.speed, c.maxRotVelRadS * scales.speed);
  const uHi = per(c.maxTransAccMS2 * acc, (c.maxTransAccMS2 / c.maxTransVelMS) * c.maxRotVelRadS * acc);
  const uLo = -per(c.maxTransDecMS2 * acc, (c.maxTransDecMS2 / c.maxTransVelMS) * c.maxRotVelRadS * acc);
  const d1 = (i: number, j: number) => {
    const a = Math.max(0, i - 1);
    const b = Math.min(N, i + 1);
    return ((q[b * 7 + j] ?? 0) - (q[a * 7 + j] ?? 0)) / ((s[b] ?? 0) - (s[a] ?? 0));
  };
  const d2 = (i: number, j: number) => {
    const m = Math.min(N - 1, Math.max(1, i));
    const h0 = (s[m] ?? 0) - (s[m - 1] ?? 0);
    const h1 = (s[m + 1] ?? 0) - (s[m] ?? 0);
    const f = (q[(m + 1) * 7 + j] ?? 0) - (q[m * 7 + j] ?? 0);
    const bk = (q[m * 7 + j] ?? 0) - (q[(m - 1) * 7 + j] ?? 0);
    return (2 * (f / h1 - bk / h0)) / (h0 + h1);
  };
  const bounds = (i: number, x: number): [number, number] => {
    let lo = uLo;
    let hi = uHi;
    for (let j = 0; j < 7; j++) {
      const a = d1(i, j);
      const b = d2(i, j) * x;
      const A = aMax[j] ?? 0;
      if (Math.abs(a) < 1e-12) continue;
      const u1 = (-A - b) / a;
      const u2 = (A - b) / a;
      lo = Math.max(lo, Math.min(u1, u2));
      hi = Math.min(hi, Math.max(u1, u2));
    }
    return [lo, hi];
  };
  const cap = new Float64Array(N + 1);
  for (let i = 0; i <= N; i++) {
    let x = vS * vS;
    for (let j = 0; j < 7; j++) x = Math.min(x, ((vMax[j] ?? 0) / Math.abs(d1(i, j))) ** 2);
    if (bounds(i, x)[0] > bounds(i, x)[1]) {
      let good = 0;
      for (let k = 0, bad = x; k < 60; k++) {
        const mid = (good + bad) / 2;
        const [lo, hi] = bounds(i, mid);
        if (lo <= hi) good = mid;
        else bad = mid;
      }
      x = good;
    }
    cap[i] = x;
  }
  const back = new Float64Array(N + 1);
  for (let i = N - 1; i >= 0; i--) {
    const h = (s[i + 1] ?? 0) - (s[i] ?? 0);
    back[i] = Math.min(cap[i] ?? 0, (back[i + 1] ?? 0) - 2 * h * bounds(i + 1, back[i + 1] ?? 0)[0]);
  }
  let x = 0;
  let t = 0;
  for (let i = 0; i < N; i++) {
    const h = (s[i + 1] ?? 0) - (s[i] ?? 0);
    const next = Math.max(0, Math.min(back[i + 1] ?? 0, x + 2 * h * bounds(i, x)[1]));
    t += (2 * h) / (Math.sqrt(x) + Math.sqrt(next));
    x = next;
  }
  return t;
}

/** Runs a planning generator to its end. */
function planToEnd<R>(steps: Generator<void, R>): R {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

describe('time-optimal path parameterization (solveTopp)', () => {
  it('on a straight joint-space path reproduces the time-optimal trapezoid of the tightest joint', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.01, max: 3, noNaN: true }),
        fc.double({ min: 0.1, max: 3, noNaN: true }),
        fc.double({ min: 0.5, max: 20, noNaN: true }),
        (distance, vMax, aMax) => {
          const N = 400;
          const s = Float64Array.from({ length: N + 1 }, (_, i) => i / N);
          const solution = planToEnd(
            solveTopp({
              s,
              xMax: new Float64Array(N + 1).fill((vMax / distance) ** 2),
              rows: 1,
              a: new Float64Array(N + 1).fill(distance),
              b: new Float64Array(N + 1),
              c: new Float64Array(N + 1).fill(aMax),
              uMin: Number.NEGATIVE_INFINITY,
              uMax: Number.POSITIVE_INFINITY,
            }),
          );
          const expected =
            distance >= (vMax * vMax) / aMax ? distance / vMax + vMax / aMax : 2 * Math.sqrt(distance / aMax);
          assert.ok(
            Math.abs(solution.durationS - expected) <= 0.01 * expected,
            `duration ${solution.durationS} s vs the optimum ${expected} s`,
          );
          for (let i = 0; i < N; i++) {
            const u = (solution.u[i] ?? 0) * distance;
            assert.ok(Math.abs(u) <= aMax * (1 + 1e-9), `acceleration ${u} beyond ${aMax} on interval ${i}`);
            assert.ok(Math.sqrt(solution.x[i] ?? 0) * distance <= vMax * (1 + 1e-9), `velocity beyond ${vMax}`);
          }
          assert.equal(solution.x[N], 0, 'ends at rest');
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('LIN and CIRC with time-optimal timing (planCartesian)', () => {
  it('plans issue 13 case: LIN 15 cm at speed 1.0 from [0, 0.4, 0, -1.4, 0, 1.3, 0], in every direction of the axes', () => {
    const from = tcpPose(chain, BENT);
    for (const d of [
      [0.15, 0, 0],
      [-0.15, 0, 0],
      [0, 0.15, 0],
      [0, -0.15, 0],
      [0, 0, 0.15],
      [0, 0, -0.15],
    ]) {
      const to = from.position.map((v, k) => v + (d[k] ?? 0));
      const scales = { speed: 1, accelScale: 0 };
      const planned = planCartesian(
        chain,
        limits,
        linePath(from.position, from.orientation, to, from.orientation),
        BENT,
        scales,
        options,
      );
      assert.ok(planned.ok, planned.ok ? '' : `${d}: ${planned.error.message}`);
      let worst = 0;
      checkSamples(planned.value, scales, (p) => {
        worst = Math.max(worst, distanceToSegment(p, from.position, to));
      });
      assert.ok(worst <= 1e-4, `${d}: ${(worst * 1000).toFixed(4)} mm off the line`);
    }
  });

  it('keeps joint 6 inside its limit where the line runs along it (a case the property below found)', () => {
    // fast-check's counterexample, exactly (rounder numbers do not bring joint 6 to its limit between two samples).
    const q0 = [
      -1.089139392, 0.6869721599999998, 1.348218432, -0.20479535999999987, 0.46515902399999964, -1.6264752000000002,
      2.23692368,
    ];
    const d = [0.06903615913508516, 0.15164205797125518, -0.11062863547073916];
    const scales = { speed: 0.9999999999999988, accelScale: 0 };
    const from = tcpPose(chain, q0);
    const to = from.position.map((v, k) => v + (d[k] ?? 0));
    const planned = planCartesian(
      chain,
      limits,
      linePath(from.position, from.orientation, to, from.orientation),
      q0,
      scales,
      options,
    );
    assert.ok(planned.ok, planned.ok ? '' : planned.error.message);
    checkSamples(planned.value, scales, () => {});
  });

  it('keeps every sample within the scaled limits and the TCP within 0.1 mm of its line, or names the place it cannot pass', () => {
    let succeeded = 0;
    let runs = 0;
    const reasons = new Map<string, number>();
    fc.assert(
      fc.property(
        fc.tuple(
          ...JOINTS.map((_, j) =>
            uniform.map(
              (u) => (limits.minRad[j] ?? 0) * 0.8 + u * ((limits.maxRad[j] ?? 0) - (limits.minRad[j] ?? 0)) * 0.8,
            ),
          ),
        ),
        offset(0.2),
        fc.double({ min: 0.05, max: 1, noNaN: true }),
        fc.constantFrom(0, 0.3, 1),
        (q0, d, speed, accelScale) => {
          runs++;
          const scales = { speed, accelScale };
          const from = tcpPose(chain, q0);
          const to = from.position.map((v, k) => v + (d[k] ?? 0));
          const planned = planCartesian(
            chain,
            limits,
            linePath(from.position, from.orientation, to, from.orientation),
            q0,
            scales,
            options,
          );
          if (!planned.ok) {
            const f = planned.error;
            assert.ok(['unreachable', 'joint_limit', 'singularity'].includes(f.reason), `reason ${f.reason}`);
            assert.match(
              f.message,
              /\(-?\d+\.\d{3}, -?\d+\.\d{3}, -?\d+\.\d{3}\) m, \d+ % along it/,
              'names the place',
            );
            reasons.set(f.reason, (reasons.get(f.reason) ?? 0) + 1);
            return;
          }
          succeeded++;
          assert.deepEqual(planned.value.points[0]?.positions, q0, 'starts at the current joints');
          let worst = 0;
          let turn = 0;
          const ws = createFkWorkspace(chain);
          checkSamples(planned.value, scales, (p) => {
            worst = Math.max(worst, distanceToSegment(p, from.position, to));
          });
          for (const point of planned.value.points) {
            forwardKinematics(chain, point.positions, ws);
            turn = Math.max(turn, quatAngle(quatFromMat(ws.tipRot), from.orientation));
          }
          assert.ok(worst <= 1e-4, `${(worst * 1000).toFixed(4)} mm off the line`);
          assert.ok(turn <= 1e-4, `the orientation drifts ${turn} rad`);
          const end = tcpPose(chain, planned.value.points.at(-1)?.positions ?? []);
          assert.ok(Math.hypot(...end.position.map((v, k) => v - (to[k] ?? 0))) <= 1e-6, 'ends at the target');
        },
      ),
      { numRuns: 60, endOnFailure: true },
    );
    assert.ok(
      succeeded >= runs * 0.4,
      `only ${succeeded} of ${runs} lines planned (${JSON.stringify(Object.fromEntries(reasons))})`,
    );
  });

  it('takes within 5 % of the fine-grid optimal duration, never less than 1 % below it (LIN and CIRC)', () => {
    const from = tcpPose(chain, BENT);
    const cases: [string, CartesianPath, MotionScales][] = [];
    for (const [d, speed, accelScale] of [
      [[0.15, 0, 0], 1, 0],
      [[0, 0.15, 0], 1, 0],
      [[0, -0.2, -0.1], 0.5, 1],
      [[0.05, 0.05, 0.05], 0.2, 0],
      [[-0.3, 0.2, 0], 1, 0.5],
    ] as const) {
      const to = from.position.map((v, k) => v + (d[k] ?? 0));
      cases.push([
        `lin ${d} at ${speed}`,
        linePath(from.position, from.orientation, to, from.orientation),
        { speed, accelScale },
      ]);
    }
    const [x, y, z] = from.position;
    const arc = arcPath(from.position, from.orientation, [x, y + 0.2, z], from.orientation, {
      interim: [x + 0.1, y + 0.1, z],
    });
    assert.ok(arc.ok, 'the arc is defined');
    cases.push(['circ 0.1 m radius at 1', arc.value, { speed: 1, accelScale: 0 }]);
    for (const [name, p, scales] of cases) {
      const planned = planCartesian(chain, limits, p, BENT, scales, options);
      assert.ok(planned.ok, planned.ok ? '' : `${name}: ${planned.error.message}`);
      const duration = trajectoryDuration(planned.value);
      const reference = referenceDuration(p, BENT, scales);
      assert.ok(
        duration <= reference * 1.05 && duration >= reference * 0.99,
        `${name}: ${duration.toFixed(4)} s against the reference ${reference.toFixed(4)} s`,
      );
    }
  });

  it('plans CIRC at speed 1 with every sample within the limits and the TCP within 0.1 mm of the circle', () => {
    const from = tcpPose(chain, BENT);
    const [x, y, z] = from.position;
    const center = [x, y + 0.1, z];
    const half = arcPath(from.position, from.orientation, [x, y + 0.2, z], from.orientation, {
      interim: [x + 0.1, y + 0.1, z],
    });
    const quarter = arcPath(from.position, from.orientation, [x + 0.1, y + 0.1, z], from.orientation, { center });
    for (const a of [half, quarter]) {
      assert.ok(a.ok, a.ok ? '' : a.error);
      const scales = { speed: 1, accelScale: 0 };
      const planned = planCartesian(chain, limits, a.value, BENT, scales, options);
      assert.ok(planned.ok, planned.ok ? '' : planned.error.message);
      let worst = 0;
      checkSamples(planned.value, scales, (p) => {
        const r = Math.hypot(...[0, 1, 2].map((k) => (p[k] ?? 0) - (center[k] ?? 0)));
        worst = Math.max(worst, Math.abs(r - 0.1), Math.abs((p[2] ?? 0) - z));
      });
      assert.ok(worst <= 1e-4, `${(worst * 1000).toFixed(4)} mm off the circle`);
    }
  });

  it('slows near a singularity instead of failing: straight up until the elbow is almost stretched', () => {
    // flange pointing up, elbow bent; the line ends 0.5 mm short of the stretched arm, where the
    // smallest singular value of the Jacobian is below 0.01 (the previous planner refused it)
    const q0 = [0, 0.25, 0, -0.5, 0, 0.25, 0];
    const from = tcpPose(chain, q0);
    const scales = { speed: 1, accelScale: 0 };
    const up = (z: number) =>
      planCartesian(
        chain,
        limits,
        linePath(from.position, from.orientation, [from.position[0], from.position[1], z], from.orientation),
        q0,
        scales,
        options,
      );
    const near = up(1.1165);
    const short = up(1.115);
    assert.ok(near.ok, near.ok ? '' : near.error.message);
    assert.ok(short.ok, short.ok ? '' : short.error.message);
    let worst = 0;
    const line = [from.position, [from.position[0], from.position[1], 1.1165]] as const;
    checkSamples(near.value, scales, (p) => {
      worst = Math.max(worst, distanceToSegment(p, line[0], line[1]));
    });
    assert.ok(worst <= 1e-4, `${(worst * 1000).toFixed(4)} mm off the line`);
    const ws = createFkWorkspace(chain);
    forwardKinematics(chain, near.value.points.at(-1)?.positions ?? [], ws, true);
    const sv = minSingularValue6(ws.jacobian, 7);
    assert.ok(sv < 0.01, `the end is near the singularity (smallest singular value ${sv})`);
    // the last 1.5 mm take longer than the first 27 mm
    const extra = trajectoryDuration(near.value) - trajectoryDuration(short.value);
    assert.ok(extra > 0.2, `1.5 mm more near the singularity take ${extra.toFixed(3)} s more`);
    const beyond = up(1.2655);
    assert.ok(!beyond.ok, 'a line beyond the stretched arm has no joint path');
    assert.equal(beyond.error.reason, 'unreachable');
    assert.match(beyond.error.message, /reachable workspace .* at \(0\.478, 0\.000, 1\.11\d\) m, \d+ % along it/);
  });

  it('refuses a path through a joint limit, naming the joint and the place', () => {
    // towards the base with the elbow already folded: joint 4 would have to fold beyond -2.09 rad (the real
    // arm's 120 degrees, rounded down; with the bundled 2.1 the same line leaves the reachable set first)
    const q0 = [0, 0.3, 0, -1.9, 0, 0.8, 0];
    const from = tcpPose(chain, q0);
    const to = [from.position[0] - 0.3, from.position[1], from.position[2]];
    const tighter: JointLimits = {
      ...limits,
      minRad: limits.minRad.map((m, j) => (j === 3 ? -2.09 : m)),
      maxRad: limits.maxRad.map((m, j) => (j === 3 ? 2.09 : m)),
    };
    const planned = planCartesian(
      chain,
      tighter,
      linePath(from.position, from.orientation, to, from.orientation),
      q0,
      { speed: 0.5, accelScale: 0 },
      options,
    );
    assert.ok(!planned.ok, 'planned beyond a joint limit');
    assert.equal(planned.error.reason, 'joint_limit', planned.error.message);
    assert.match(planned.error.message, /^joint4 would pass its limit \(-2\.09 rad\) at \(.*\) m, \d+ % along it/);
  });

  it('refuses a motion longer than the bound before sampling its joint path', () => {
    const from = tcpPose(chain, BENT);
    const to = [from.position[0], from.position[1] + 0.3, from.position[2]];
    const steps = planCartesianSteps(
      chain,
      limits,
      linePath(from.position, from.orientation, to, from.orientation),
      BENT,
      { speed: 0.01, accelScale: 0 },
      { ...options, maxDurationS: 10 },
    );
    const first = steps.next();
    assert.ok(first.done, 'answered without a single step of work');
    assert.ok(!first.value.ok && first.value.error.reason === 'too_long', 'too long');
    assert.ok(
      (first.value.error.durationS ?? 0) >= 30,
      `0.3 m at 0.01 m/s takes at least 30 s: ${first.value.error.durationS}`,
    );
  });
});
