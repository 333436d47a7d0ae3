/**
 * Teaching: saving a named position (where the arm stands, or given joint angles) and deleting one, with the checks a
 * pendant makes (an SRDF name is read-only, the angles within the joint limits and the safety envelope, the arm at
 * rest when its own angles are saved) and the `positions` event that lets every client refresh its list.
 */
import { type ApiError, invalid, unavailable } from '../core/errors.ts';
import type { OpContext } from '../core/operation.ts';
import { REST_VELOCITY_RAD_S } from '../ros/hold.ts';
import type { PositionChangeError, PositionStore } from '../positions/store.ts';
import { err, ok, type Result } from '../result.ts';
import { describeLimitViolation, findLimitViolation } from '../robot/limits.ts';
import { createEnvelopeChecker } from '../safety/envelope.ts';
import { latestArmState } from './trajectory-request.ts';

/** What save_position and delete_position answer. */
export interface TeachResult {
  readonly success: boolean;
  readonly message: string;
  readonly name: string;
  readonly source: 'taught';
  readonly joints: Record<string, number>;
  readonly created?: boolean;
}

/** The `positions` event's data: what changed, and who changed it (the token's name). */
export interface PositionsEvent {
  readonly change: 'saved' | 'deleted';
  readonly name: string;
  readonly joints: Record<string, number>;
  readonly by: string;
  /** Taught positions after the change. */
  readonly count: number;
}

/** The services teaching reaches: declare them in the operation's `needs`. */
export const TEACH_NEEDS = ['positions', 'safety', 'events'] as const;
type TeachNeed = (typeof TEACH_NEEDS)[number];

function storeOf(ctx: OpContext<TeachNeed>): Result<PositionStore, ApiError> {
  const store = ctx.services.positions;
  return store ? ok(store) : err({ kind: 'unavailable', detail: 'this app keeps no taught positions' });
}

function changeError(error: PositionChangeError): ApiError {
  if (error.kind === 'full') return { kind: 'conflict', detail: error.detail };
  if (error.kind === 'not_found') return { kind: 'not_found', detail: error.detail };
  // The server could not write its own file (a full disk, a read-only folder): its fault, not the request's.
  return { kind: 'internal', detail: error.detail };
}

/** The 409 of a name the robot description owns. */
async function srdfOwns(ctx: OpContext<never>, name: string, doing: string): Promise<ApiError | undefined> {
  const states = await ctx.ros.groupStates();
  if (!states.ok) return unavailable(states.error);
  if (!states.value.some((s) => s.name === name)) return undefined;
  return {
    kind: 'conflict',
    detail: `'${name}' is a position of the robot description (SRDF): it is read-only and cannot be ${doing}; teach under another name`,
  };
}

/** The angles to save: the body's (by joint name), or where the arm stands when it is at rest. */
function anglesToSave(
  ctx: OpContext<never>,
  joints: Readonly<Record<string, number>> | undefined,
): Result<number[], ApiError> {
  const limits = ctx.ros.limits;
  if (joints) return ok(limits.jointNames.map((joint) => joints[joint] ?? Number.NaN));
  const arm = latestArmState(ctx.ros, limits);
  if (!arm)
    return err({ kind: 'unavailable', detail: 'no joint state: where the arm stands is unknown; give the joints' });
  const moving = arm.state.velocities.findIndex((qd) => Math.abs(qd) > REST_VELOCITY_RAD_S);
  if (moving >= 0)
    return err({
      kind: 'conflict',
      detail: `the arm is moving (${limits.jointNames[moving]} at ${arm.state.velocities[moving]?.toFixed(4)} rad/s): save where it stands once it is at rest, or give the joints`,
    });
  const outside = findLimitViolation(limits, arm.state.positions);
  if (outside)
    return err(
      invalid(['body'], `where the arm stands is outside the joint limits: ${describeLimitViolation(outside)}`),
    );
  return ok([...arm.state.positions]);
}

/** Saves `name` (see the module comment). */
export async function savePosition(
  ctx: OpContext<TeachNeed>,
  name: string,
  joints: Readonly<Record<string, number>> | undefined,
): Promise<Result<TeachResult, ApiError>> {
  const store = storeOf(ctx);
  if (!store.ok) return store;
  const owned = await srdfOwns(ctx, name, 'overwritten');
  if (owned) return err(owned);
  const angles = anglesToSave(ctx, joints);
  if (!angles.ok) return angles;
  const q = angles.value;
  const safety = ctx.services.safety;
  if (safety?.envelope && safety.chain.jointNames.length === q.length) {
    const violation = createEnvelopeChecker(safety.chain, safety.envelope).check(q);
    if (violation)
      return err(
        invalid(
          joints ? ['body', 'joints'] : ['body'],
          `${joints ? 'the joints are' : 'where the arm stands is'} outside the safety envelope: ${violation.message}`,
        ),
      );
  }
  const jointNames = ctx.ros.limits.jointNames;
  const byName = Object.fromEntries(jointNames.map((joint, i) => [joint, q[i] ?? 0]));
  const saved = await store.value.save({
    name,
    jointsRad: q,
    savedAt: new Date().toISOString(),
    savedBy: ctx.caller.name,
  });
  if (!saved.ok) return err(changeError(saved.error));
  const { created } = saved.value;
  publish(ctx, store.value, { change: 'saved', name, joints: byName });
  return ok({
    success: true,
    message: `${created ? 'taught' : 'taught again (replaced)'} '${name}' ${joints ? 'at the given joint angles' : 'where the arm stands'}; move there with {op:move_to_named_position}`,
    name,
    source: 'taught',
    joints: byName,
    created,
  });
}

/** Deletes the taught position `name`: 409 for an SRDF name, 404 for a name never taught. */
export async function deletePosition(ctx: OpContext<TeachNeed>, name: string): Promise<Result<TeachResult, ApiError>> {
  const store = storeOf(ctx);
  if (!store.ok) return store;
  const owned = await srdfOwns(ctx, name, 'deleted');
  if (owned) return err(owned);
  const deleted = await store.value.delete(name);
  if (!deleted.ok) return err(changeError(deleted.error));
  const jointNames = ctx.ros.limits.jointNames;
  const byName = Object.fromEntries(jointNames.map((joint, i) => [joint, deleted.value.jointsRad[i] ?? 0]));
  publish(ctx, store.value, { change: 'deleted', name, joints: byName });
  return ok({
    success: true,
    message: `deleted the taught position '${name}'`,
    name,
    source: 'taught',
    joints: byName,
  });
}

function publish(ctx: OpContext<TeachNeed>, store: PositionStore, change: Omit<PositionsEvent, 'by' | 'count'>): void {
  const event: PositionsEvent = { ...change, by: ctx.caller.name, count: store.list().length };
  ctx.services.events?.publish('positions', event);
}
