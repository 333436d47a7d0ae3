import type { MainModule, MjModel } from 'mujoco-js';

/** Tolerance (m) for "a sphere sits on a cylinder's end": 0.1 mm, well below any clearance that matters. */
const FUSE_TOLERANCE_M = 1e-4;

/** An XML attribute value with everything but letters, digits, `_`, `.` and `-` replaced. */
export const xmlAttr = (v: string) => v.replace(/[^A-Za-z0-9_.-]/g, '_');

/**
 * A `<contact>` section excluding every parent and child link from each other. Adjacent links
 * overlap at their joint by design (the housings around a joint belong to both). MuJoCo filters
 * parent and child itself, except where the parent is welded to the world (the base and link 1),
 * so the exclusions are written out for every pair: the same pairs the distance queries skip.
 */
export function adjacentExcludes(mj: MainModule, model: MjModel): string {
  const parent = model.body_parentid as Int32Array;
  const name = (b: number) => mj.mj_id2name(model, mj.mjtObj.mjOBJ_BODY.value, b);
  const lines: string[] = [];
  for (let b = 1; b < model.nbody; b++) {
    const p = parent[b] ?? 0;
    const child = name(b);
    const parentName = name(p);
    if (p === 0 || !child || !parentName) continue;
    lines.push(`<exclude body1="${xmlAttr(parentName)}" body2="${xmlAttr(child)}"/>`);
  }
  return lines.length > 0 ? `<contact>\n${lines.join('\n')}\n</contact>` : '';
}

/**
 * Which geoms of a compiled model form capsules: a cylinder with a sphere of its radius centred on
 * each end face, all in one body (URDF has no capsule, so a robot description spells one that
 * way). Returns the cylinders to turn into capsules and the spheres they make redundant.
 */
export function capsuleTriples(mj: MainModule, model: MjModel): { cylinders: Set<number>; caps: Set<number> } {
  const type = model.geom_type as Int32Array;
  const body = model.geom_bodyid as Int32Array;
  const size = model.geom_size as Float64Array;
  const pos = model.geom_pos as Float64Array;
  const quat = model.geom_quat as Float64Array;
  const CYLINDER = mj.mjtGeom.mjGEOM_CYLINDER.value;
  const SPHERE = mj.mjtGeom.mjGEOM_SPHERE.value;
  const cylinders = new Set<number>();
  const caps = new Set<number>();
  for (let c = 0; c < model.ngeom; c++) {
    if (type[c] !== CYLINDER) continue;
    const r = size[3 * c] ?? 0;
    const h = size[3 * c + 1] ?? 0;
    // The cylinder's axis is its local z: the third column of the rotation of (w, x, y, z).
    const [w = 1, x = 0, y = 0, z = 0] = quat.subarray(4 * c, 4 * c + 4);
    const axis = [2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)];
    const ends = [1, -1].map((s) => [0, 1, 2].map((k) => (pos[3 * c + k] ?? 0) + s * h * (axis[k] ?? 0)));
    const found = ends.map((end) => {
      for (let s = 0; s < model.ngeom; s++) {
        if (type[s] !== SPHERE || body[s] !== body[c] || caps.has(s)) continue;
        if (Math.abs((size[3 * s] ?? 0) - r) > FUSE_TOLERANCE_M) continue;
        const d = Math.hypot(...[0, 1, 2].map((k) => (pos[3 * s + k] ?? 0) - (end[k] ?? 0)));
        if (d <= FUSE_TOLERANCE_M) return s;
      }
      return -1;
    });
    const [a = -1, b = -1] = found;
    if (a < 0 || b < 0 || a === b) continue;
    cylinders.add(c);
    caps.add(a).add(b);
  }
  return { cylinders, caps };
}

/**
 * The exported MJCF of `model` with its capsule triples (see {@link capsuleTriples}) written as
 * MuJoCo capsules: the same solid (a capsule is exactly a cylinder with a hemisphere on each end),
 * one geom instead of three, checked by MuJoCo's exact capsule colliders. The export lists geoms
 * in index order, so the n-th `<geom>` tag is geom n; when the count disagrees the text is
 * returned unchanged (still correct, only slower).
 */
export function fuseCapsules(mj: MainModule, model: MjModel, mjcf: string): string {
  const { cylinders, caps } = capsuleTriples(mj, model);
  if (cylinders.size === 0) return mjcf;
  const tags = mjcf.match(/<geom\b[^>]*\/>/g) ?? [];
  if (tags.length !== model.ngeom) return mjcf;
  let index = 0;
  return mjcf.replace(/<geom\b[^>]*\/>/g, (tag) => {
    const g = index++;
    if (caps.has(g)) return '';
    return cylinders.has(g) ? tag.replace('type="cylinder"', 'type="capsule"') : tag;
  });
}
