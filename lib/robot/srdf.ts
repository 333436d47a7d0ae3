import { XMLParser } from 'fast-xml-parser';
import { err, ok, type Result } from '../result.ts';

/** A named state of a planning group (SRDF `group_state`), joints in the given joint order. */
export interface GroupState {
  readonly name: string;
  readonly group: string;
  readonly jointsRad: readonly number[];
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  isArray: (name, _path, _leaf, isAttribute) =>
    !isAttribute && ['group', 'group_state', 'joint', 'chain'].includes(name),
});

interface RawJoint {
  name?: string;
  value?: string | number;
}
interface RawState {
  name?: string;
  group?: string;
  joint?: RawJoint[];
}
interface RawGroup {
  name?: string;
}

/**
 * Reads the group states of `group` from SRDF text. Every state must set each of `jointNames`
 * to a finite value; other joints of the state are ignored.
 */
export function parseGroupStates(
  xml: string,
  group: string,
  jointNames: readonly string[],
): Result<GroupState[], string> {
  let doc: unknown;
  try {
    doc = parser.parse(xml, true);
  } catch (e) {
    return err(`malformed SRDF: ${(e as Error).message.split('\n')[0]}`);
  }
  const robot = (doc as { robot?: { group?: RawGroup[]; group_state?: RawState[] } }).robot;
  if (!robot) return err('malformed SRDF: no <robot> element');
  const groups = (robot.group ?? []).map((g) => g.name);
  if (!groups.includes(group)) return err(`SRDF has no group '${group}' (groups: ${groups.join(', ') || 'none'})`);
  const states: GroupState[] = [];
  for (const raw of robot.group_state ?? []) {
    if (raw.group !== group || !raw.name) continue;
    const byName = new Map((raw.joint ?? []).map((j) => [j.name, Number(j.value)]));
    const jointsRad: number[] = [];
    for (const joint of jointNames) {
      const value = byName.get(joint);
      if (value === undefined || !Number.isFinite(value)) {
        return err(`SRDF group_state '${raw.name}' has no finite value for ${joint}`);
      }
      jointsRad.push(value);
    }
    states.push({ name: raw.name, group, jointsRad });
  }
  return ok(states);
}
