import type { JogLimit } from '../motion/jog.ts';
import type { Config } from '../settings/load.ts';
import type { ArmModel, Scene } from './model.ts';

/** The collision model's name of a keep-out box is this and the box's name. */
const KEEP_OUT_PREFIX = 'keep_out.';

/**
 * The collision scene of the settings: the obstacles of `sim.obstacles` and the keep-out boxes of the safety settings,
 * which are obstacles of the collision model too (chomp's cost and solve_ik's check see them).
 */
export function sceneOf(config: Pick<Config, 'sim'> & Partial<Pick<Config, 'safety'>>): Scene {
  const keepOut = (config.safety?.keep_out ?? []).map((box) => ({
    name: `${KEEP_OUT_PREFIX}${box.name}`,
    center: [0, 1, 2].map((a) => ((box.min[a] ?? 0) + (box.max[a] ?? 0)) / 2) as [number, number, number],
    size: [0, 1, 2].map((a) => (box.max[a] ?? 0) - (box.min[a] ?? 0)) as [number, number, number],
  }));
  return {
    marginM: config.sim.collision_margin,
    boxes: [
      ...config.sim.obstacles.map((o) => ({
        name: o.name,
        center: [o.center[0] ?? 0, o.center[1] ?? 0, o.center[2] ?? 0] as const,
        size: [o.size[0] ?? 0, o.size[1] ?? 0, o.size[2] ?? 0] as const,
      })),
      ...keepOut,
    ],
  };
}

/**
 * The jog engine's collision guard on the model: a keep-out box is an obstacle of the collision model too (the links'
 * own shapes), so its contact is a keep-out; any other contact is a collision.
 */
export function jogCollision(model: Pick<ArmModel, 'collisionAt'>): (q: ArrayLike<number>) => JogLimit | undefined {
  return (q) => {
    const contact = model.collisionAt(q);
    if (!contact) return undefined;
    const zone = [contact.a, contact.b].find((label) => label.startsWith(KEEP_OUT_PREFIX));
    const link = zone === contact.a ? contact.b : contact.a;
    return zone
      ? { kind: 'keep_out', detail: `${link} would enter the keep-out zone '${zone.slice(KEEP_OUT_PREFIX.length)}'` }
      : { kind: 'collision', detail: `${contact.a} would touch ${contact.b}` };
  };
}
