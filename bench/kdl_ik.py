#!/usr/bin/python3
"""KDL's IK solvers on the same chain, limits and targets as armgate's IK bench.

Reads JSON on stdin: {"joints": [{"origin": [x, y, z], "axis": [x, y, z]}...], "tip": [x, y, z],
"min": [...], "max": [...], "configs": [[q1..q7], ...], "eps": 1e-5}. Each config's FK (by KDL)
is the target; each solver starts at the middle of the limits. Prints JSON per solver:
success rate, median and p95 time (us). Success: pose within eps (position m, rotation rad) and
inside the limits. References to the limit arrays and sub-solvers are kept alive on purpose:
KDL crashes on temporaries.
"""
import json
import math
import sys
import time

import PyKDL as kdl


def build_chain(spec):
    chain = kdl.Chain()
    joints = spec["joints"]
    chain.addSegment(kdl.Segment(kdl.Joint(kdl.Joint.Fixed), kdl.Frame(kdl.Vector(*joints[0]["origin"]))))
    for i, joint in enumerate(joints):
        nxt = joints[i + 1]["origin"] if i + 1 < len(joints) else spec["tip"]
        axis = kdl.Vector(*joint["axis"])
        chain.addSegment(kdl.Segment(kdl.Joint("j%d" % i, kdl.Vector(0, 0, 0), axis, kdl.Joint.RotAxis), kdl.Frame(kdl.Vector(*nxt))))
    return chain


def jnt_array(values):
    a = kdl.JntArray(len(values))
    for i, v in enumerate(values):
        a[i] = v
    return a


def pose_error(f1, f2):
    dp = (f1.p - f2.p).Norm()
    rot = f1.M.Inverse() * f2.M
    angle, _axis = rot.GetRotAngle()
    return dp, abs(angle)


def percentile(sorted_values, p):
    if not sorted_values:
        return float("nan")
    k = min(len(sorted_values) - 1, max(0, int(round(p * (len(sorted_values) - 1)))))
    return sorted_values[k]


def main():
    spec = json.load(sys.stdin)
    eps = spec.get("eps", 1e-5)
    chain = build_chain(spec)
    n = chain.getNrOfJoints()
    qmin = jnt_array(spec["min"])
    qmax = jnt_array(spec["max"])
    seed = jnt_array([(a + b) / 2 for a, b in zip(spec["min"], spec["max"])])
    fk = kdl.ChainFkSolverPos_recursive(chain)
    vik = kdl.ChainIkSolverVel_pinv(chain)
    nr_jl = kdl.ChainIkSolverPos_NR_JL(chain, qmin, qmax, fk, vik, 100, eps)
    # LMA's eps applies to a weighted error in which rotation counts 0.01: with eps = 1e-5 it stops
    # at rotation errors near 1e-3. A tighter eps lets it meet the same 1e-5 criterion when it converges.
    lma = kdl.ChainIkSolverPos_LMA(chain, 1e-11, 500, 1e-15)
    solvers = {"KDL NR_JL": nr_jl, "KDL LMA (eps 1e-11)": lma}
    targets = []
    for q in spec["configs"]:
        frame = kdl.Frame()
        fk.JntToCart(jnt_array(q), frame)
        targets.append(frame)
    out = {}
    for name, solver in solvers.items():
        times = []
        ok = 0
        result = kdl.JntArray(n)
        for target in targets:
            t0 = time.perf_counter()
            solver.CartToJnt(seed, target, result)
            times.append((time.perf_counter() - t0) * 1e6)
            reached = kdl.Frame()
            fk.JntToCart(result, reached)
            dp, dr = pose_error(reached, target)
            inside = all(spec["min"][i] - 1e-9 <= result[i] <= spec["max"][i] + 1e-9 for i in range(n))
            if dp <= eps and dr <= eps and inside and not any(math.isnan(result[i]) for i in range(n)):
                ok += 1
        times.sort()
        out[name] = {"success": ok / len(targets), "median_us": percentile(times, 0.5), "p95_us": percentile(times, 0.95)}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
