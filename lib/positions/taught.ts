/**
 * Taught positions as data: what one is, the rule of their names, and their YAML file (armgate.positions_file) read
 * and written. Pure: no I/O (lib/positions/store.ts keeps them and writes the file).
 */
import { parse as parseYaml, stringify } from 'yaml';
import { describeLimitViolation, findLimitViolation, type JointLimits } from '../robot/limits.ts';
import { err, ok, type Result } from '../result.ts';

/** A position's name: a letter or _, then up to 63 letters, digits, _ or -. */
export const POSITION_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
/** The rule of {@link POSITION_NAME} in words. */
export const POSITION_NAME_RULE = 'a letter or _, then up to 63 letters, digits, _ or - (1..64 characters)';
/** Most taught positions kept: one more is refused until one is deleted. */
export const MAX_TAUGHT_POSITIONS = 1000;

/** A position saved by teaching: its joint angles (rad, in the limits' joint order), when and by whom. */
export interface TaughtPosition {
  readonly name: string;
  readonly jointsRad: readonly number[];
  /** ISO 8601 time of the save. */
  readonly savedAt: string;
  /** The token's name that saved it (never the token). */
  readonly savedBy: string;
}

const HEADER =
  "# armgate's taught positions (PUT /robot/positions/{name}, the save_position tool). armgate replaces this file\n" +
  '# whole on each change; edit it only while armgate is stopped. Joint angles in radians.\n';

/** The file's text for `positions` (sorted by name, so a diff shows what changed). */
export function positionsFileText(positions: Iterable<TaughtPosition>, jointNames: readonly string[]): string {
  const sorted = [...positions].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const doc = {
    positions: Object.fromEntries(
      sorted.map((p) => [
        p.name,
        {
          joints: Object.fromEntries(jointNames.map((joint, i) => [joint, p.jointsRad[i] ?? 0])),
          saved_at: p.savedAt,
          saved_by: p.savedBy,
        },
      ]),
    ),
  };
  return HEADER + stringify(doc);
}

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/**
 * The taught positions of a file's text; an empty file has none. Any problem (malformed YAML, an unknown key, a bad
 * name, a joint missing, unknown, not finite or outside its limits, too many positions) is an error naming where.
 */
export function parsePositionsFile(text: string, limits: JointLimits): Result<TaughtPosition[], string> {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    return err(`malformed YAML: ${(e as Error).message.split('\n')[0]?.replace(/:$/, '')}`);
  }
  if (doc === null || doc === undefined) return ok([]);
  if (!isRecord(doc)) return err('expected a mapping with the key positions');
  const extra = Object.keys(doc).find((key) => key !== 'positions');
  if (extra !== undefined) return err(`${extra}: unknown key (expected only positions)`);
  const entries = doc.positions ?? {};
  if (!isRecord(entries)) return err('positions: expected a mapping of name -> {joints, saved_at, saved_by}');
  const names = Object.keys(entries);
  if (names.length > MAX_TAUGHT_POSITIONS)
    return err(`positions: ${names.length} positions, more than the ${MAX_TAUGHT_POSITIONS} armgate keeps`);
  const out: TaughtPosition[] = [];
  for (const name of names) {
    const where = `positions.${name}`;
    if (!POSITION_NAME.test(name)) return err(`${where}: the name must be ${POSITION_NAME_RULE}`);
    const entry = entries[name];
    if (!isRecord(entry)) return err(`${where}: expected a mapping {joints, saved_at, saved_by}`);
    const unknown = Object.keys(entry).find((key) => !['joints', 'saved_at', 'saved_by'].includes(key));
    if (unknown !== undefined) return err(`${where}.${unknown}: unknown key (expected joints, saved_at, saved_by)`);
    const joints = entry.joints;
    if (!isRecord(joints)) return err(`${where}.joints: expected a mapping of joint name -> angle (rad)`);
    const stray = Object.keys(joints).find((joint) => !limits.jointNames.includes(joint));
    if (stray !== undefined)
      return err(`${where}.joints.${stray}: not a joint of this arm (${limits.jointNames.join(', ')})`);
    const jointsRad: number[] = [];
    for (const joint of limits.jointNames) {
      const value = joints[joint];
      if (typeof value !== 'number' || !Number.isFinite(value))
        return err(`${where}.joints.${joint}: expected a finite angle in radians`);
      jointsRad.push(value);
    }
    const outside = findLimitViolation(limits, jointsRad);
    if (outside) return err(`${where}.joints.${outside.joint}: ${describeLimitViolation(outside)}`);
    const savedAt = entry.saved_at ?? '';
    const savedBy = entry.saved_by ?? '';
    if (typeof savedAt !== 'string') return err(`${where}.saved_at: expected a time (text)`);
    if (typeof savedBy !== 'string') return err(`${where}.saved_by: expected a name (text)`);
    out.push({ name, jointsRad, savedAt, savedBy });
  }
  return ok(out);
}
