import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { type Chain, chainFromUrdf } from '../../lib/kinematics/chain.ts';
import { createFkWorkspace, forwardKinematics, poseError } from '../../lib/kinematics/fk.ts';
import { createIkWorkspace, solveIk } from '../../lib/kinematics/ik.ts';
import { minSingularValue6 } from '../../lib/kinematics/linalg.ts';
import type { JointLimits } from '../../lib/robot/limits.ts';
import { ArmModel, type LinkPose } from '../../lib/sim/model.ts';
import { seededRandom } from '../../lib/random.ts';
import { bundledLimits, bundledUrdf, JOINTS, WORK } from '../support/arm.ts';

let urdf = '';
let chain: Chain;
let limits: JointLimits;
let model: ArmModel;

/**
 * The solver's time budget on a clock that counts its work, not the machine's load: the solver reads its clock once
 * per restart, and each read spends {@link RESTART_MS}, about what one restart (up to 60 iterations) costs on a quiet
 * machine, so a 5 ms budget is 50 restarts whatever else the machine runs. Success within 5 ms of real time is a
 * figure of `npm run bench -- ik` (10,000 targets, and the time an unreachable target takes to give up).
 */
const RESTART_MS = 0.1;
const budget = (ms: number, random: () => number) => {
  let spentMs = 0;
  return { deadlineMs: ms, nowMs: () => (spentMs += RESTART_MS), random };
};

/** Uniform in [0, 1] (fast-check's doubles favour 0 and the bounds; the TRAC-IK protocol draws uniformly). */
const uniform = fc.noBias(fc.integer({ min: 0, max: 1_000_000_000 })).map((k) => k / 1_000_000_000);

/** A uniformly random configuration at least `margin` rad inside the limits (built lazily: limits load in before()). */
const config = (margin = 0) =>
  fc.tuple(
    ...JOINTS.map((_, i) =>
      uniform.map(
        (u) => (limits.minRad[i] ?? 0) + margin + u * ((limits.maxRad[i] ?? 0) - (limits.minRad[i] ?? 0) - 2 * margin),
      ),
    ),
  );

function fkPose(q: ArrayLike<number>): { pos: Float64Array; rot: Float64Array } {
  const ws = createFkWorkspace(chain);
  forwardKinematics(chain, q, ws);
  return { pos: Float64Array.from(ws.tipPos), rot: Float64Array.from(ws.tipRot) };
}

function errorOf(
  q: ArrayLike<number>,
  pos: ArrayLike<number>,
  rot: ArrayLike<number>,
): { posErr: number; rotErr: number } {
  const here = fkPose(q);
  const e = new Float64Array(6);
  poseError(e, here.pos, here.rot, pos, rot);
  return { posErr: Math.hypot(e[0] ?? 0, e[1] ?? 0, e[2] ?? 0), rotErr: Math.hypot(e[3] ?? 0, e[4] ?? 0, e[5] ?? 0) };
}

const withinLimits = (q: ArrayLike<number>) =>
  Array.from(q).every((v, i) => v >= (limits.minRad[i] ?? 0) && v <= (limits.maxRad[i] ?? 0));
const mid = () => limits.minRad.map((lo, i) => (lo + (limits.maxRad[i] ?? 0)) / 2);

describe('kinematics of the bundled arm', () => {
  before(async () => {
    urdf = await bundledUrdf();
    const parsed = chainFromUrdf(urdf, 'base_link', 'flange', JOINTS);
    if (!parsed.ok) throw new Error(parsed.error);
    chain = parsed.value;
    limits = await bundledLimits();
    model = await ArmModel.load(urdf, JOINTS);
  });
  after(() => {
    model.dispose();
  });

  describe('kinematic chain from the bundled URDF', () => {
    it('agrees with the MuJoCo model of the same URDF at random configurations (1e-9)', () => {
      const ws = createFkWorkspace(chain);
      const out: LinkPose = { positionM: new Float64Array(3), rotation: new Float64Array(9) };
      fc.assert(
        fc.property(config(), (q) => {
          forwardKinematics(chain, q, ws);
          assert.ok(model.linkPose(q, 'flange', out));
          for (let k = 0; k < 3; k++)
            assert.ok(Math.abs((ws.tipPos[k] ?? 0) - (out.positionM[k] ?? 0)) < 1e-9, `position ${k}`);
          for (let k = 0; k < 9; k++)
            assert.ok(Math.abs((ws.tipRot[k] ?? 0) - (out.rotation[k] ?? 0)) < 1e-9, `rotation ${k}`);
        }),
        { numRuns: 300 },
      );
    });

    it('has Jacobian columns equal to central finite differences of FK (position and rotation via poseError)', () => {
      const ws = createFkWorkspace(chain);
      const h = 1e-6;
      const e = new Float64Array(6);
      fc.assert(
        fc.property(config(), (q) => {
          forwardKinematics(chain, q, ws, true);
          const J = Float64Array.from(ws.jacobian);
          for (let i = 0; i < 7; i++) {
            const plus = [...q];
            const minus = [...q];
            plus[i] = (plus[i] ?? 0) + h;
            minus[i] = (minus[i] ?? 0) - h;
            const a = fkPose(minus);
            const b = fkPose(plus);
            // translation: (p+ - p-) / 2h; rotation: the rotation vector of R+ R-^T over 2h
            poseError(e, a.pos, a.rot, b.pos, b.rot);
            for (let r = 0; r < 6; r++) {
              const fd = (e[r] ?? 0) / (2 * h);
              assert.ok(
                Math.abs(fd - (J[r * 7 + i] ?? 0)) < 1e-7,
                `J[${r}][${i}] = ${J[r * 7 + i]} vs finite difference ${fd}`,
              );
            }
          }
        }),
        { numRuns: 200 },
      );
    });
  });

  describe('inverse kinematics (damped least squares with restarts)', () => {
    it('solves FK(IK(T)) = T within 1e-5 m / 1e-5 rad inside the limits, seeded at mid-limits with a 5 ms budget', () => {
      const ws = createIkWorkspace(chain);
      let solved = 0;
      let runs = 0;
      const failures: string[] = [];
      fc.assert(
        fc.property(config(), fc.integer({ min: 1, max: 2 ** 31 - 1 }), (q, seed) => {
          runs++;
          const target = fkPose(q);
          const r = solveIk(
            chain,
            limits.minRad,
            limits.maxRad,
            target.pos,
            target.rot,
            mid(),
            budget(5, seededRandom(seed)),
            ws,
          );
          if (r.status !== 'converged') {
            // The target is >= 99.9 % success under this protocol (npm run bench measures it
            // on 10,000 targets); here a rare miss is counted rather than failing the property.
            failures.push(`${r.status} at q = [${q.map((v) => v.toFixed(4)).join(', ')}] after ${r.restarts} restarts`);
            return;
          }
          solved++;
          const { posErr, rotErr } = errorOf(r.qRad, target.pos, target.rot);
          assert.ok(posErr <= 1e-5, `position error ${posErr} m`);
          assert.ok(rotErr <= 1e-5, `rotation error ${rotErr} rad`);
          assert.ok(withinLimits(r.qRad), `solution inside the limits: ${Array.from(r.qRad)}`);
        }),
        { numRuns: 500 },
      );
      assert.ok(solved / runs >= 0.995, `solved ${solved} of ${runs}: ${failures.join('; ')}`);
    });

    it('returns the solution nearest a seed next to the true configuration (no elbow flip)', () => {
      // Away from the limits (the 0.05 rad perturbation cannot reach them); near them: next test.
      const ws = createIkWorkspace(chain);
      const perturbation = fc.tuple(...JOINTS.map(() => uniform.map((u) => (u - 0.5) * 0.1)));
      fc.assert(
        fc.property(config(0.06), perturbation, fc.integer({ min: 1, max: 2 ** 31 - 1 }), (q, dq, seed) => {
          const target = fkPose(q);
          const start = q.map((v, i) => v + (dq[i] ?? 0));
          const r = solveIk(
            chain,
            limits.minRad,
            limits.maxRad,
            target.pos,
            target.rot,
            start,
            budget(5, seededRandom(seed)),
            ws,
          );
          assert.equal(r.status, 'converged');
          assert.equal(r.restarts, 0, 'found from the seed, without a random restart');
          const worst = Math.max(...Array.from(r.qRad).map((v, i) => Math.abs(v - (start[i] ?? 0))));
          assert.ok(worst < 0.3, `largest joint change from the seed ${worst.toFixed(3)} rad`);
        }),
        { numRuns: 300 },
      );
    });

    it('returns the solution nearest the seed also when a joint sits within 0.02 rad of its limit', () => {
      // Issue 3: "seeded from the current joint state and preferring the solution nearest to it
      // (no elbow flips on small moves)" holds next to a limit too: a move that starts near a
      // limit is ordinary (and LIN solves every path sample this way, without restarts).
      // 200 fixed cases: one joint (each in turn) near its lower or upper limit, the seed 0.05 rad
      // away from the true configuration (clamped into the limits).
      const random = seededRandom(1);
      const ws = createIkWorkspace(chain);
      const misses: string[] = [];
      for (let c = 0; c < 200; c++) {
        const q = limits.minRad.map((lo, i) => lo + 0.06 + random() * ((limits.maxRad[i] ?? 0) - lo - 0.12));
        const j = c % 7;
        const d = random() * 0.02;
        q[j] = c % 2 ? (limits.minRad[j] ?? 0) + d : (limits.maxRad[j] ?? 0) - d;
        const target = fkPose(q);
        const start = q.map((v, i) =>
          Math.min(limits.maxRad[i] ?? 0, Math.max(limits.minRad[i] ?? 0, v + (random() - 0.5) * 0.1)),
        );
        const r = solveIk(
          chain,
          limits.minRad,
          limits.maxRad,
          target.pos,
          target.rot,
          start,
          budget(5, seededRandom(c + 1)),
          ws,
        );
        const worst = Math.max(...Array.from(r.qRad).map((v, i) => Math.abs(v - (start[i] ?? 0))));
        if (r.status !== 'converged' || worst >= 0.3)
          misses.push(
            `case ${c} (${JOINTS[j]} near its limit): ${r.status} after ${r.restarts} restarts, ${worst.toFixed(2)} rad from the seed`,
          );
      }
      assert.ok(
        misses.length <= 2,
        `${misses.length} of 200 solutions left the seed's neighbourhood:\n${misses.join('\n')}`,
      );
    });

    it('gives up on an unreachable target (x = 2 m) with a timeout by its deadline, its best attempt in the limits', () => {
      const rot = fkPose(WORK).rot;
      const r = solveIk(chain, limits.minRad, limits.maxRad, [2, 0, 0.5], rot, WORK, budget(5, seededRandom(42)));
      assert.equal(r.status, 'timeout');
      assert.ok(r.posErrM > 0.5, `best position error ${r.posErrM} m`);
      // The deadline is checked after each attempt: no attempt starts after it (5 ms = 50 restarts of the clock).
      assert.ok(r.restarts <= 5 / RESTART_MS, `gave up after ${r.restarts} restarts (budget ${5 / RESTART_MS})`);
      assert.ok(r.restarts >= 5 / RESTART_MS - 1, `used its budget: ${r.restarts} restarts`);
      assert.ok(withinLimits(r.qRad), 'the best attempt stays inside the limits');
    });
  });

  describe('smallest singular value of the Jacobian', () => {
    const sv = (q: readonly number[]) => {
      const ws = createFkWorkspace(chain);
      forwardKinematics(chain, q, ws, true);
      return minSingularValue6(ws.jacobian, 7);
    };

    it('is zero at the stretched home configuration (all-zero angles)', () => {
      assert.ok(sv([0, 0, 0, 0, 0, 0, 0]) < 1e-6, `got ${sv([0, 0, 0, 0, 0, 0, 0])}`);
    });

    it('is clearly positive at work', () => {
      assert.ok(sv(WORK) > 0.01, `got ${sv(WORK)}`);
    });

    it('is the smallest singular value: J J^T - (s^2 - d) I is positive definite and J J^T - (s^2 + d) I is not', () => {
      // An independent bracket by Cholesky (Sylvester's criterion), d = 1e-9: no eigenvalue of
      // J J^T lies below s^2 - d, and at least one lies below s^2 + d.
      const ws = createFkWorkspace(chain);
      fc.assert(
        fc.property(config(), (q) => {
          forwardKinematics(chain, q, ws, true);
          const J = ws.jacobian;
          const a = Array.from({ length: 36 }, (_, k) => {
            const r = Math.floor(k / 6),
              c = k % 6;
            let s = 0;
            for (let i = 0; i < 7; i++) s += (J[r * 7 + i] ?? 0) * (J[c * 7 + i] ?? 0);
            return s;
          });
          const s = minSingularValue6(J, 7);
          const d = 1e-9;
          assert.ok(positiveDefinite(a, s * s - d), `an eigenvalue of J J^T lies below s^2 - d (s = ${s})`);
          assert.ok(!positiveDefinite(a, s * s + d), `no eigenvalue of J J^T lies below s^2 + d (s = ${s})`);
        }),
        { numRuns: 300 },
      );
    });
  });
});

/** True when the symmetric 6x6 matrix `a` minus `shift` I has a Cholesky factorization (is positive definite). */
function positiveDefinite(a: readonly number[], shift: number): boolean {
  const n = 6;
  const l = new Array<number>(36).fill(0);
  for (let j = 0; j < n; j++) {
    let diag = (a[j * n + j] ?? 0) - shift;
    for (let k = 0; k < j; k++) diag -= (l[j * n + k] ?? 0) ** 2;
    if (!(diag > 0)) return false;
    const ljj = Math.sqrt(diag);
    l[j * n + j] = ljj;
    for (let i = j + 1; i < n; i++) {
      let v = a[i * n + j] ?? 0;
      for (let k = 0; k < j; k++) v -= (l[i * n + k] ?? 0) * (l[j * n + k] ?? 0);
      l[i * n + j] = v / ljj;
    }
  }
  return true;
}
