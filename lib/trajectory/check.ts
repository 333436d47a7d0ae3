/**
 * Everything a trajectory request needs before it is published, as one synchronous pure function
 * the trajectory worker runs off the event loop: parsing (a JSON body or a CSV upload), the schema
 * and the bounds, the position limits of every point, and (with validate_limits) the velocities
 * filled in and the execution from the arm's state checked against the joint limits. Points go
 * back packed in Float64Arrays (transferred, not copied).
 */
import * as v from 'valibot';
import { type ApiError, boundedIssues, fromValibot, invalid, type ValidationIssue } from '../core/errors.ts';
import type { TrajectoryPoint } from '../planning/trajectory.ts';
import type { JointLimits } from '../robot/limits.ts';
import { coerceScalarStrings } from '../core/schema-shape.ts';
import { parseTrajectoryCsv } from './csv.ts';
import {
  type ArmState,
  describeViolation,
  holdPointJump,
  type LimitViolation,
  planExecution,
} from '../planning/dynamics.ts';
import { type ApiTrajectoryPoint, firstNonIncreasingTime, limitViolations, toTrajectoryPoints } from './points.ts';
import { TrajectoryBodySchema } from './schema.ts';
import type { Chain } from '../kinematics/chain.ts';
import type { Envelope } from '../safety/envelope.ts';
import { firstEnvelopeViolation } from '../safety/trajectory.ts';

/** What to check: a JSON body's text, or a CSV file's bytes with its separator and validate_limits. */
export type CheckSource =
  | { readonly kind: 'json'; readonly text: string }
  | {
      readonly kind: 'csv';
      readonly bytes: Uint8Array;
      readonly separator: string;
      readonly validateLimits: boolean;
      /** Answer with the controller's outcome (default false). */
      readonly wait?: boolean;
    };

/** A check job: the source, the arm's state (J1..J7; undefined when no joint state is known) and the limits. */
export interface CheckRequest {
  readonly source: CheckSource;
  readonly state: ArmState | undefined;
  readonly limits: JointLimits;
  /** The safety envelope and the TCP chain it is checked on; absent: none configured. */
  readonly envelope?: { readonly chain: Chain; readonly envelope: Envelope };
}

/** Points packed per joint: `positions[7 i + j]`; `velocities` only when they were filled in. */
export interface PackedPoints {
  readonly count: number;
  readonly joints: number;
  readonly times: Float64Array;
  readonly positions: Float64Array;
  readonly velocities: Float64Array | undefined;
}

/** The outcome: points to publish (and whether their velocities were filled), or the error (422 issues already bounded). */
export type CheckResult =
  | {
      readonly ok: true;
      readonly points: PackedPoints;
      readonly filled: boolean;
      readonly wait: boolean;
      /** CSV: the columns that were ignored (neither a joint nor the time). */
      readonly ignoredColumns?: readonly string[];
      /** CSV: the file rows of the first two points (for issues found at publication). */
      readonly firstRows?: readonly number[];
    }
  | { readonly ok: false; readonly error: ApiError };

/** Where issues of a source point: JSON points by index, CSV rows (header = row 1) and joint columns. */
interface Locator {
  readonly loc: (point: number, joint: number) => (string | number)[];
  readonly label: (point: number) => string;
}

const JSON_LOCATOR: Locator = { loc: (i, j) => ['body', 'points', i, 'positions', j], label: (i) => `point ${i}` };
/** Where issues of CSV point i point: its file row (`rows[i]`; row i + 2 when the file had no blank rows). */
function csvLocator(rows?: readonly number[]): Locator {
  const row = (i: number) => rows?.[i] ?? i + 2;
  return { loc: (i, j) => ['body', 'file', row(i), `joint${j + 1}`], label: (i) => `row ${row(i)}` };
}

/** A validation error whose issues are cut to the first 20 (and a count), so that it crosses threads small. */
function bounded(error: ApiError): ApiError {
  if (error.kind !== 'validation') return error;
  const [first, ...rest] = boundedIssues(error.issues);
  return first ? { kind: 'validation', issues: [first, ...rest] } : error;
}

/** Parses the source into points and the validate_limits flag. */
function parseSource(source: CheckSource):
  | {
      ok: true;
      points: ApiTrajectoryPoint[];
      validate: boolean;
      wait: boolean;
      rows?: readonly number[];
      ignored?: readonly string[];
    }
  | { ok: false; error: ApiError } {
  if (source.kind === 'json') {
    if (source.text.trim() === '')
      return { ok: false, error: invalid(['body'], 'Field required: a JSON body is needed', 'missing') };
    let doc: unknown;
    try {
      doc = JSON.parse(source.text);
    } catch (e) {
      return { ok: false, error: invalid(['body'], `JSON decode error: ${(e as Error).message}`, 'json_invalid') };
    }
    const parsed = v.safeParse(TrajectoryBodySchema, coerceScalarStrings(TrajectoryBodySchema, doc));
    if (!parsed.success) return { ok: false, error: fromValibot('body', parsed.issues, TrajectoryBodySchema) };
    const points = parsed.output.points.map((p) => ({
      positions: p.positions as number[],
      time_from_start: p.time_from_start,
    }));
    return { ok: true, points, validate: parsed.output.validate_limits, wait: parsed.output.wait };
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(source.bytes);
  } catch {
    return { ok: false, error: invalid(['body', 'file'], 'the file is not valid UTF-8 text', 'encoding') };
  }
  const parsed = parseTrajectoryCsv(text, source.separator);
  if (!parsed.ok) {
    const { row, column, msg } = parsed.error;
    const where = column ? `row ${row}, column ${column}` : `row ${row}`;
    return { ok: false, error: invalid(['body', 'file', row, ...(column ? [column] : [])], `${where}: ${msg}`, 'csv') };
  }
  const { points, rows, ignored } = parsed.value;
  return { ok: true, points, rows, ignored, validate: source.validateLimits, wait: source.wait ?? false };
}

/** A lone point at t = 0: a hold point, when it is near the current position (see holdPointJump). */
function isHoldPoint(points: readonly { readonly time_from_start: number }[]): boolean {
  return points.length === 1 && points[0]?.time_from_start === 0;
}

/**
 * True when the execution check applies: times increase strictly (otherwise the controller refuses
 * the trajectory, which the response reports) and it is not a lone point at t = 0 (a hold point).
 */
export function dynamicsApply(points: readonly { readonly time_from_start: number }[]): boolean {
  if (isHoldPoint(points)) return false;
  return firstNonIncreasingTime(points as readonly ApiTrajectoryPoint[]) < 0;
}

/** The 422 issue of an execution limit violation, located and worded for its source. */
export function violationIssue(
  violation: LimitViolation,
  limits: JointLimits,
  locator: 'json' | 'csv',
  rows?: readonly number[],
): ValidationIssue {
  const where = locator === 'json' ? JSON_LOCATOR : csvLocator(rows);
  return {
    loc: where.loc(violation.point, violation.joint),
    msg: describeViolation(violation, limits, where.label),
    type: 'limit',
  };
}

/** Packs points (and their velocities, when every point has them) into Float64Arrays. */
export function packPoints(points: readonly TrajectoryPoint[], joints: number): PackedPoints {
  const count = points.length;
  const times = new Float64Array(count);
  const positions = new Float64Array(count * joints);
  const withVelocities = count > 0 && points.every((p) => p.velocities);
  const velocities = withVelocities ? new Float64Array(count * joints) : undefined;
  for (let i = 0; i < count; i++) {
    const p = points[i] as TrajectoryPoint;
    times[i] = p.timeFromStartS;
    for (let j = 0; j < joints; j++) {
      positions[i * joints + j] = p.positions[j] ?? 0;
      if (velocities) velocities[i * joints + j] = p.velocities?.[j] ?? 0;
    }
  }
  return { count, joints, times, positions, velocities };
}

/** Point `i` of packed points in the planning library's shape (with velocities when packed with them). */
export function packedPoint(packed: PackedPoints, i: number): TrajectoryPoint {
  const at = i * packed.joints;
  const positions = Array.from(packed.positions.subarray(at, at + packed.joints));
  const timeFromStartS = packed.times[i] ?? 0;
  const v = packed.velocities;
  return v
    ? { positions, velocities: Array.from(v.subarray(at, at + packed.joints)), timeFromStartS }
    : { positions, timeFromStartS };
}

/**
 * The points accepted, unless their execution leaves the safety envelope: then a 422 naming the
 * first point whose approach leaves it (JSON: the point; CSV: the row) and the zone.
 */
function withinEnvelope(
  request: CheckRequest,
  points: PackedPoints,
  filled: boolean,
  wait: boolean,
  csv: { readonly ignoredColumns?: readonly string[]; readonly firstRows?: readonly number[] },
  rows: readonly number[] | undefined,
): CheckResult {
  const safety = request.envelope;
  if (safety) {
    const found = firstEnvelopeViolation(safety.chain, safety.envelope, points, request.state?.positions);
    if (found) {
      const where = request.source.kind === 'json' ? JSON_LOCATOR : csvLocator(rows);
      const loc = where.loc(found.point, 0).slice(0, -1);
      const issue: ValidationIssue = {
        loc,
        msg: `${where.label(found.point)}: ${found.violation.message}; nothing was sent (safety envelope)`,
        type: found.violation.kind === 'workspace' ? 'envelope_workspace' : 'envelope_keep_out',
      };
      return { ok: false, error: { kind: 'validation', issues: [issue] } };
    }
  }
  return { ok: true, points, filled, wait, ...csv };
}

/** Runs the whole check of one request (see the module comment). */
export function checkTrajectoryRequest(request: CheckRequest): CheckResult {
  const { source, state, limits } = request;
  const joints = limits.jointNames.length;
  const parsed = parseSource(source);
  if (!parsed.ok) return { ok: false, error: bounded(parsed.error) };
  const points = parsed.points;
  const wait = parsed.wait;
  const csv = parsed.rows
    ? { ignoredColumns: parsed.ignored ?? [], firstRows: parsed.rows.slice(0, 2) }
    : ({} as Record<string, never>);
  const done = (packed: PackedPoints, filled: boolean) =>
    withinEnvelope(request, packed, filled, wait, csv, parsed.rows);
  if (!parsed.validate) return done(packPoints(toTrajectoryPoints(points), joints), false);
  const locator = source.kind === 'json' ? JSON_LOCATOR : csvLocator(parsed.rows);
  const outside = limitViolations(points, limits, locator.loc, locator.label);
  if (outside) return { ok: false, error: outside };
  const noState: CheckResult = {
    ok: false,
    error: {
      kind: 'unavailable',
      detail: "no joint state received yet: the trajectory cannot be checked from the arm's current state",
    },
  };
  if (isHoldPoint(points)) {
    // A hold point only near where the arm is: farther, a lone point at t = 0 is a jump, refused as every other.
    if (!state) return noState;
    const jump = holdPointJump(points[0]?.positions ?? [], state.positions);
    if (jump)
      return {
        ok: false,
        error: { kind: 'validation', issues: [violationIssue(jump, limits, source.kind, parsed.rows)] },
      };
  }
  if (!dynamicsApply(points)) return done(packPoints(toTrajectoryPoints(points), joints), false);
  if (!state) return noState;
  const plan = planExecution(state, toTrajectoryPoints(points), limits, true);
  if (plan.violation)
    return {
      ok: false,
      error: { kind: 'validation', issues: [violationIssue(plan.violation, limits, source.kind, parsed.rows)] },
    };
  return done(packPoints(plan.points, joints), true);
}
