/**
 * The named positions as every operation sees them: the robot description's (SRDF group states, read-only) and the
 * taught ones (armgate.positions_file). An SRDF name always means the SRDF's position: a taught one of the same name
 * (possible only when the description changed after it was taught) is not listed and cannot be reached by its name.
 */
import type { OpContext } from '../core/operation.ts';
import type { TaughtPosition } from '../positions/taught.ts';
import { err, ok, type Result } from '../result.ts';
import type { GroupState } from '../robot/srdf.ts';
import type { InterfaceUnavailable } from '../ros/context.ts';

/** A named position as GET /robot/positions lists it. */
export interface NamedPositionView {
  readonly name: string;
  readonly description: string;
  readonly group: string;
  readonly joints: Record<string, number>;
  readonly source: 'srdf' | 'taught';
  readonly saved_at?: string;
  readonly saved_by?: string;
}

/** A position found by its name: an SRDF group state or a taught position, with its joint angles (rad, J1..J7). */
export type FoundPosition =
  | {
      readonly source: 'srdf';
      readonly name: string;
      readonly jointsRad: readonly number[];
      readonly state: GroupState;
    }
  | {
      readonly source: 'taught';
      readonly name: string;
      readonly jointsRad: readonly number[];
      readonly taught: TaughtPosition;
    };

/** The taught positions of the call's app (none where the app keeps none). */
function taughtOf(ctx: Pick<OpContext<'positions'>, 'services'>): readonly TaughtPosition[] {
  return ctx.services.positions?.list() ?? [];
}

/** Every named position: the SRDF's, then the taught ones not shadowed by an SRDF name. */
export async function listPositions(
  ctx: Pick<OpContext<'positions'>, 'services' | 'ros'>,
): Promise<Result<NamedPositionView[], InterfaceUnavailable>> {
  const context = ctx.ros;
  const states = await context.groupStates();
  if (!states.ok) return states;
  const jointNames = context.endpoints.joint_names;
  const joints = (q: readonly number[]) => Object.fromEntries(jointNames.map((name, i) => [name, q[i] ?? 0]));
  const srdf = states.value.map(
    (s): NamedPositionView => ({
      name: s.name,
      description: context.describeState(s.name),
      group: s.group,
      joints: joints(s.jointsRad),
      source: 'srdf',
    }),
  );
  const srdfNames = new Set(srdf.map((p) => p.name));
  const taught = taughtOf(ctx)
    .filter((p) => !srdfNames.has(p.name))
    .map(
      (p): NamedPositionView => ({
        name: p.name,
        description: `Taught position${p.savedBy ? `, saved by ${p.savedBy}` : ''}${p.savedAt ? ` at ${p.savedAt}` : ''}.`,
        group: context.endpoints.planning_group,
        joints: joints(p.jointsRad),
        source: 'taught',
        saved_at: p.savedAt,
        saved_by: p.savedBy,
      }),
    );
  return ok([...srdf, ...taught]);
}

/**
 * The position called `name`: the SRDF's when it has one, else the taught one, else undefined (`known` lists every
 * name, for the message). When the SRDF cannot be read, a taught position is still found (it was checked against the
 * SRDF's names when it was saved); an unknown name is then the error.
 */
export async function findPosition(
  ctx: Pick<OpContext<'positions'>, 'services' | 'ros'>,
  name: string,
): Promise<Result<{ found: FoundPosition | undefined; known: readonly string[] }, InterfaceUnavailable>> {
  const states = await ctx.ros.groupStates();
  const taught = taughtOf(ctx);
  if (!states.ok) {
    const own = ctx.services.positions?.get(name);
    if (own) return ok({ found: { source: 'taught', name, jointsRad: own.jointsRad, taught: own }, known: [] });
    return err(states.error);
  }
  const state = states.value.find((s) => s.name === name);
  const known = [
    ...states.value.map((s) => s.name),
    ...taught.map((p) => p.name).filter((n) => !states.value.some((s) => s.name === n)),
  ];
  if (state) return ok({ found: { source: 'srdf', name, jointsRad: state.jointsRad, state }, known });
  const own = ctx.services.positions?.get(name);
  if (own) return ok({ found: { source: 'taught', name, jointsRad: own.jointsRad, taught: own }, known });
  return ok({ found: undefined, known });
}
