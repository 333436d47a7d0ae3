import { err, ok, type Result } from '../result.ts';

/** The joint space a sampling planner searches: bounds, a validity check and randomness. */
export interface JointSpace {
  readonly minRad: readonly number[];
  readonly maxRad: readonly number[];
  /** True when the configuration is free of collisions. */
  isValid(qRad: readonly number[]): boolean;
  /** Uniform random numbers in [0, 1). */
  random(): number;
}

export interface RrtOptions {
  readonly deadlineMs: number;
  readonly nowMs: () => number;
  /** Largest extension per step (rad, max norm); default 0.2. */
  readonly stepRad?: number;
  /** Edge check resolution (rad, max norm); default 0.02. */
  readonly resolutionRad?: number;
}

type Q = number[];

const maxAbsDiff = (a: readonly number[], b: readonly number[]) =>
  a.reduce((m, v, i) => Math.max(m, Math.abs(v - (b[i] ?? 0))), 0);

/** True when the straight joint-space segment from a to b is valid at the given resolution. */
export function segmentValid(
  space: JointSpace,
  a: readonly number[],
  b: readonly number[],
  resolutionRad: number,
): boolean {
  const steps = Math.max(1, Math.ceil(maxAbsDiff(a, b) / resolutionRad));
  for (let k = 1; k <= steps; k++) {
    const t = k / steps;
    if (!space.isValid(a.map((v, i) => v + ((b[i] ?? 0) - v) * t))) return false;
  }
  return true;
}

interface Tree {
  nodes: Q[];
  parents: number[];
}

function nearest(tree: Tree, q: readonly number[]): number {
  let best = 0;
  let bestD = Number.POSITIVE_INFINITY;
  for (let i = 0; i < tree.nodes.length; i++) {
    const node = tree.nodes[i] as Q;
    let d = 0;
    for (let j = 0; j < q.length; j++) d += ((node[j] ?? 0) - (q[j] ?? 0)) ** 2;
    if (d < bestD) {
      bestD = d;
      best = i;
    }
  }
  return best;
}

/** Extends `tree` toward q by one step; returns the new node's index, or -1 when blocked. */
function extend(
  tree: Tree,
  q: readonly number[],
  space: JointSpace,
  step: number,
  resolution: number,
): { index: number; reached: boolean } {
  const nearIndex = nearest(tree, q);
  const near = tree.nodes[nearIndex] as Q;
  const d = maxAbsDiff(near, q);
  const reached = d <= step;
  const next = reached ? [...q] : near.map((v, i) => v + (((q[i] ?? 0) - v) * step) / d);
  if (!segmentValid(space, near, next, resolution)) return { index: -1, reached: false };
  tree.nodes.push(next);
  tree.parents.push(nearIndex);
  return { index: tree.nodes.length - 1, reached };
}

function pathTo(tree: Tree, index: number): Q[] {
  const path: Q[] = [];
  for (let i = index; i >= 0; i = tree.parents[i] ?? -1) path.push(tree.nodes[i] as Q);
  return path;
}

/**
 * RRT-Connect (Kuffner and LaValle): two trees grown from start and goal, each extension
 * followed by a greedy connect of the other tree. A generator that yields after every iteration
 * so a caller can give the event loop its turn; it returns the joint-space waypoints from start
 * to goal, or why not (invalid ends, or no path before the deadline).
 */
export function* planRrtConnect(
  space: JointSpace,
  start: readonly number[],
  goal: readonly number[],
  options: RrtOptions,
): Generator<void, Result<Q[], string>> {
  const step = options.stepRad ?? 0.2;
  const resolution = options.resolutionRad ?? 0.02;
  if (!space.isValid(start)) return err('the start configuration is in collision');
  if (!space.isValid(goal)) return err('the goal configuration is in collision');
  if (segmentValid(space, start, goal, resolution)) return ok([[...start], [...goal]]);
  let a: Tree = { nodes: [[...start]], parents: [-1] };
  let b: Tree = { nodes: [[...goal]], parents: [-1] };
  let aIsStart = true;
  while (options.nowMs() < options.deadlineMs) {
    const sample = space.minRad.map((min, i) => min + space.random() * ((space.maxRad[i] ?? 0) - min));
    const grown = extend(a, sample, space, step, resolution);
    if (grown.index >= 0) {
      const target = a.nodes[grown.index] as Q;
      for (;;) {
        const connected = extend(b, target, space, step, resolution);
        if (connected.index < 0) break;
        if (connected.reached) {
          const fromA = pathTo(a, grown.index).reverse();
          const fromB = pathTo(b, connected.index);
          const path = [...fromA, ...fromB.slice(1)];
          return ok(aIsStart ? path : path.reverse());
        }
        // A greedy connect can take many steps, each collision-checked: the caller gets its turn between them.
        yield;
      }
    }
    [a, b] = [b, a];
    aIsStart = !aIsStart;
    yield;
  }
  return err('no collision-free path found in time');
}

/**
 * Random shortcutting: joins two random points of the path when the straight segment is valid. A generator that yields
 * after every attempt (each a collision-checked segment; 200 of them took a second or more in one go).
 */
export function* shortcutPath(
  space: JointSpace,
  path: readonly Q[],
  attempts: number,
  resolutionRad = 0.02,
): Generator<void, Q[]> {
  let current = path.map((q) => [...q]);
  for (let k = 0; k < attempts && current.length > 2; k++) {
    const i = Math.floor(space.random() * (current.length - 2));
    const j = i + 2 + Math.floor(space.random() * (current.length - i - 2));
    if (j >= current.length) continue;
    if (segmentValid(space, current[i] as Q, current[j] as Q, resolutionRad))
      current = [...current.slice(0, i + 1), ...current.slice(j)];
    yield;
  }
  return current;
}

/**
 * Chaikin corner cutting, each corner replaced by points at 1/4 and 3/4 of its edges only when
 * the new edges stay valid: a smoother polyline through free space. A generator that yields after every corner.
 */
export function* smoothPath(
  space: JointSpace,
  path: readonly Q[],
  passes: number,
  resolutionRad = 0.02,
): Generator<void, Q[]> {
  let current = path.map((q) => [...q]);
  for (let pass = 0; pass < passes; pass++) {
    if (current.length < 3) break;
    const next: Q[] = [current[0] as Q];
    for (let i = 1; i < current.length - 1; i++) {
      const prev = current[i - 1] as Q,
        mid = current[i] as Q,
        after = current[i + 1] as Q;
      const p = mid.map((v, j) => v + ((prev[j] ?? 0) - v) * 0.25);
      const r = mid.map((v, j) => v + ((after[j] ?? 0) - v) * 0.25);
      const last = next[next.length - 1] as Q;
      if (
        segmentValid(space, last, p, resolutionRad) &&
        segmentValid(space, p, r, resolutionRad) &&
        segmentValid(space, r, after, resolutionRad)
      )
        next.push(p, r);
      else next.push(mid);
      yield;
    }
    next.push(current[current.length - 1] as Q);
    current = next;
  }
  return current;
}
