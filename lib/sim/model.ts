import type { DoubleBuffer, MainModule, MjData, MjModel } from 'mujoco-js';
import { adjacentExcludes, fuseCapsules, xmlAttr } from './model-xml.ts';
import { loadMujocoModule } from './mujoco.ts';

/** A box in the scene: centre and full edge lengths in metres, axis-aligned in base_link. */
export interface BoxObstacle {
  readonly name: string;
  readonly center: readonly [number, number, number];
  readonly size: readonly [number, number, number];
}

/** What the collision model sees besides the arm: the floor at z = 0 and boxes. */
export interface Scene {
  readonly boxes: readonly BoxObstacle[];
  /** Safety distance (m): closer than this counts as a collision. */
  readonly marginM: number;
}

/** A contact found by the collision check: the two things that touch and their distance (m). */
export interface Contact {
  readonly a: string;
  readonly b: string;
  readonly distM: number;
}

/** A link pose: position in metres and a row-major 3x3 rotation, both in base_link. */
export interface LinkPose {
  readonly positionM: Float64Array;
  readonly rotation: Float64Array;
}

let modelCounter = 0;

/** How many compiled scenes are kept (the last used): a process serves one; tests build a few. */
const COMPILED_KEPT = 8;
/** Compiled scenes by their scene's XML and the description: the same texts compile to the same model. */
const compiled = new Map<string, MjModel>();

/** True when the first `n` values of `a` and `b` are the same (Object.is: -0 is not 0). */
function sameValues(a: ArrayLike<number>, b: ArrayLike<number>, n: number): boolean {
  for (let i = 0; i < n; i++) if (!Object.is(a[i] ?? 0, b[i] ?? 0)) return false;
  return true;
}

/** The scene's part of the model: the floor and the boxes, each geom with the scene's margin. */
function sceneXmlOf(scene: Scene): string {
  const margin = scene.marginM;
  return [
    `<default><geom margin="${margin}"/></default>`,
    '<worldbody>',
    `<geom name="floor" type="plane" size="0 0 1" margin="${margin}"/>`,
    ...scene.boxes.map(
      (b) =>
        `<geom name="${xmlAttr(b.name)}" type="box" pos="${b.center.join(' ')}" size="${b.size.map((v) => v / 2).join(' ')}" margin="${margin}"/>`,
    ),
  ].join('\n');
}

/**
 * The description with the scene added, compiled, from the memo when these texts were compiled already (the last
 * {@link COMPILED_KEPT}): MuJoCo compiles the URDF, its MJCF form gets the scene, and that is compiled again.
 * Callers copy it; the memo's model is never handed out.
 */
function compiledScene(mj: MainModule, descriptionXml: string, sceneXml: string): MjModel {
  const key = `${sceneXml}\n\n${descriptionXml}`;
  const known = compiled.get(key);
  if (known) {
    compiled.delete(key);
    compiled.set(key, known);
    return known;
  }
  const model = compileScene(mj, descriptionXml, sceneXml);
  compiled.set(key, model);
  for (const [oldest, old] of compiled) {
    if (compiled.size <= COMPILED_KEPT) break;
    compiled.delete(oldest);
    old.delete();
  }
  return model;
}

/** Compiles the description (URDF or MJCF) with `sceneXml` added; throws with MuJoCo's message when it cannot. */
function compileScene(mj: MainModule, descriptionXml: string, sceneXml: string): MjModel {
  const dir = `/armgate-model-${++modelCounter}`;
  mj.FS.mkdir(dir);
  const isUrdf = /<robot[\s>]/.test(descriptionXml);
  const file = `${dir}/robot.${isUrdf ? 'urdf' : 'xml'}`;
  mj.FS.writeFile(file, descriptionXml);
  const robot = mj.MjModel.loadFromXML(file);
  if (mj.mj_saveLastXML(`${dir}/robot.mjcf.xml`, robot) !== 1)
    throw new Error('MuJoCo could not export the robot model');
  const exported = new TextDecoder().decode(mj.FS.readFile(`${dir}/robot.mjcf.xml`) as Uint8Array);
  const mjcf = fuseCapsules(mj, robot, exported);
  const excludes = adjacentExcludes(mj, robot);
  robot.delete();
  const withScene = mjcf
    .replace('<worldbody>', () => sceneXml)
    .replace(/<compiler([^>]*)\/>/, '<compiler$1/>\n<option gravity="0 0 -9.81"/>')
    .replace('</worldbody>', `</worldbody>\n${excludes}`);
  mj.FS.writeFile(`${dir}/scene.xml`, withScene);
  return mj.MjModel.loadFromXML(`${dir}/scene.xml`);
}

/**
 * The simulated arm's model in MuJoCo, loaded from the robot description (URDF) with the scene
 * (floor, boxes) added: forward kinematics of every link, inverse dynamics (joint efforts),
 * collision checks and distances. Joints are addressed in the order of `jointNames`; one MjData
 * is kept as scratch, so calls are synchronous and not re-entrant (JavaScript's single thread
 * guarantees that).
 */
export class ArmModel {
  readonly jointNames: readonly string[];
  private readonly mj: MainModule;
  private readonly model: MjModel;
  private readonly data: MjData;
  /** qpos address of each joint, in `jointNames` order. */
  private readonly qposAdr: Int32Array;
  private readonly dofAdr: Int32Array;
  private readonly bodyIds = new Map<string, number>();
  /** Geom pairs the collision check considers (not the same body, not parent and child, not both fixed). */
  private readonly pairs: { readonly g1: number; readonly g2: number; readonly self: boolean }[] = [];
  private readonly selfRangeM: number;
  private readonly geomLabels: string[] = [];
  private readonly fromTo: DoubleBuffer;
  /** The last inverse dynamics' state and efforts. */
  private readonly lastInverse: {
    valid: boolean;
    readonly q: Float64Array;
    readonly qd: Float64Array;
    readonly qdd: Float64Array;
    readonly tau: Float64Array;
  };

  private constructor(mj: MainModule, model: MjModel, jointNames: readonly string[], selfRangeM: number) {
    this.selfRangeM = selfRangeM;
    this.mj = mj;
    this.model = model;
    this.data = new mj.MjData(model);
    this.jointNames = jointNames;
    this.qposAdr = new Int32Array(jointNames.length);
    this.dofAdr = new Int32Array(jointNames.length);
    const jntQposAdr = model.jnt_qposadr as Int32Array;
    const jntDofAdr = model.jnt_dofadr as Int32Array;
    jointNames.forEach((name, i) => {
      const id = mj.mj_name2id(model, mj.mjtObj.mjOBJ_JOINT.value, name);
      if (id < 0) throw new Error(`robot description has no joint '${name}'`);
      this.qposAdr[i] = jntQposAdr[id] ?? 0;
      this.dofAdr[i] = jntDofAdr[id] ?? 0;
    });
    for (let b = 0; b < model.nbody; b++) {
      const name = mj.mj_id2name(model, mj.mjtObj.mjOBJ_BODY.value, b);
      if (name) this.bodyIds.set(name, b);
    }
    const geomBody = model.geom_bodyid as Int32Array;
    const bodyParent = model.body_parentid as Int32Array;
    const bodyDofs = model.body_dofnum as Int32Array;
    const bodyName = (b: number) => (b === 0 ? 'world' : mj.mj_id2name(model, mj.mjtObj.mjOBJ_BODY.value, b));
    const movable = (b: number): boolean => b !== 0 && ((bodyDofs[b] ?? 0) > 0 || movable(bodyParent[b] ?? 0));
    for (let g = 0; g < model.ngeom; g++) {
      const b = geomBody[g] ?? 0;
      this.geomLabels.push(b === 0 ? mj.mj_id2name(model, mj.mjtObj.mjOBJ_GEOM.value, g) || `geom${g}` : bodyName(b));
    }
    for (let g1 = 0; g1 < model.ngeom; g1++) {
      for (let g2 = g1 + 1; g2 < model.ngeom; g2++) {
        const b1 = geomBody[g1] ?? 0,
          b2 = geomBody[g2] ?? 0;
        if (b1 === b2 || bodyParent[b1] === b2 || bodyParent[b2] === b1) continue;
        if (!movable(b1) && !movable(b2)) continue;
        this.pairs.push({ g1, g2, self: movable(b1) && movable(b2) });
      }
    }
    this.fromTo = new mj.DoubleBuffer(6);
    const n = jointNames.length;
    this.lastInverse = {
      valid: false,
      q: new Float64Array(n),
      qd: new Float64Array(n),
      qdd: new Float64Array(n),
      tau: new Float64Array(n),
    };
  }

  /**
   * Loads a URDF (or MJCF) text into MuJoCo and adds the scene: MuJoCo compiles the URDF, its
   * MJCF form gets the floor and the boxes, and that is loaded again (once per description and
   * scene: a model of the same texts is a copy of the compiled one). Every geom gets the scene's
   * margin, so contacts closer than it are reported. Throws with MuJoCo's message when it cannot.
   */
  static async load(
    descriptionXml: string,
    jointNames: readonly string[],
    scene: Scene = { boxes: [], marginM: 0 },
  ): Promise<ArmModel> {
    const mj = await loadMujocoModule();
    // The model is the compiled one's copy: its own memory, whatever other models of the same texts do.
    const model = new mj.MjModel(compiledScene(mj, descriptionXml, sceneXmlOf(scene)));
    return new ArmModel(mj, model, jointNames, Math.max(scene.marginM, 0.005));
  }

  /** Names of all links (bodies) of the model. */
  linkNames(): string[] {
    return [...this.bodyIds.keys()];
  }

  /** True when the model has a link of this name. */
  hasLink(name: string): boolean {
    return this.bodyIds.has(name);
  }

  private setState(qRad: ArrayLike<number>, qdRadS?: ArrayLike<number>, qddRadS2?: ArrayLike<number>): void {
    const qpos = this.data.qpos as Float64Array;
    const qvel = this.data.qvel as Float64Array;
    const qacc = this.data.qacc as Float64Array;
    for (let i = 0; i < this.jointNames.length; i++) {
      qpos[this.qposAdr[i] ?? 0] = qRad[i] ?? 0;
      const dof = this.dofAdr[i] ?? 0;
      qvel[dof] = qdRadS?.[i] ?? 0;
      qacc[dof] = qddRadS2?.[i] ?? 0;
    }
  }

  /**
   * Pose of `link` in base_link at joint angles `qRad`, written into `out`.
   * Returns false when the model has no such link.
   */
  linkPose(qRad: ArrayLike<number>, link: string, out: LinkPose): boolean {
    const id = this.bodyIds.get(link);
    if (id === undefined) return false;
    this.setState(qRad);
    this.mj.mj_kinematics(this.model, this.data);
    const xpos = this.data.xpos as Float64Array;
    const xmat = this.data.xmat as Float64Array;
    for (let k = 0; k < 3; k++) out.positionM[k] = xpos[3 * id + k] ?? 0;
    for (let k = 0; k < 9; k++) out.rotation[k] = xmat[9 * id + k] ?? 0;
    return true;
  }

  /**
   * Joint efforts (N m) that produce acceleration `qddRadS2` at position `qRad` and velocity
   * `qdRadS` under gravity: MuJoCo's inverse dynamics. With zero velocity and acceleration these
   * are the torques that hold the arm against gravity. The same state as the last call's (an arm
   * at rest, published at 1 kHz) gives the last call's efforts without computing them again.
   */
  inverseDynamics(
    qRad: ArrayLike<number>,
    qdRadS: ArrayLike<number>,
    qddRadS2: ArrayLike<number>,
    out: Float64Array,
  ): Float64Array {
    const last = this.lastInverse;
    const n = this.jointNames.length;
    if (
      last.valid &&
      sameValues(last.q, qRad, n) &&
      sameValues(last.qd, qdRadS, n) &&
      sameValues(last.qdd, qddRadS2, n)
    ) {
      for (let i = 0; i < n; i++) out[i] = last.tau[i] ?? 0;
      return out;
    }
    this.setState(qRad, qdRadS, qddRadS2);
    this.mj.mj_inverse(this.model, this.data);
    const tau = this.data.qfrc_inverse as Float64Array;
    for (let i = 0; i < n; i++) {
      out[i] = tau[this.dofAdr[i] ?? 0] ?? 0;
      last.q[i] = qRad[i] ?? 0;
      last.qd[i] = qdRadS[i] ?? 0;
      last.qdd[i] = qddRadS2[i] ?? 0;
      last.tau[i] = out[i] ?? 0;
    }
    last.valid = true;
    return out;
  }

  /**
   * Runs MuJoCo's collision detection at `qRad` and calls `visit` with the labels and distance of
   * every contact. `data.contact` hands out a copy of the contact list in WebAssembly memory on
   * every read, so it is read once per call and freed: reading it per contact leaked about 4 kB
   * per contact and ran out of the 2 GB heap after some 100,000 checks of a colliding arm.
   */
  private visitContacts(qRad: ArrayLike<number>, visit: (a: string, b: string, distM: number) => void): void {
    this.setState(qRad);
    this.mj.mj_kinematics(this.model, this.data);
    this.mj.mj_collision(this.model, this.data);
    if (this.data.ncon === 0) return;
    const contacts = this.data.contact;
    try {
      for (let k = 0; k < this.data.ncon; k++) {
        const c = contacts.get(k);
        if (!c) continue;
        visit(this.geomLabels[c.geom1] ?? '?', this.geomLabels[c.geom2] ?? '?', c.dist);
        c.delete();
      }
    } finally {
      contacts.delete();
    }
  }

  /** The closest contact at `qRad` (self or scene, nearer than the margin), or undefined when free. */
  collisionAt(qRad: ArrayLike<number>): Contact | undefined {
    let closest: Contact | undefined;
    this.visitContacts(qRad, (a, b, distM) => {
      if (!closest || distM < closest.distM) closest = { a, b, distM };
    });
    return closest;
  }

  /**
   * Every pair of things nearer than the margin at `qRad` (links by name, the floor, boxes), each
   * once with its smallest distance (m; negative when they overlap), closest first. Empty when free.
   */
  contactsAt(qRad: ArrayLike<number>): Contact[] {
    const byPair = new Map<string, Contact>();
    this.visitContacts(qRad, (first, second, distM) => {
      const [a, b] = first < second ? [first, second] : [second, first];
      const key = `${a}\n${b}`;
      const known = byPair.get(key);
      if (!known || distM < known.distM) byPair.set(key, { a, b, distM });
    });
    return [...byPair.values()].sort((x, y) => x.distM - y.distM);
  }

  /**
   * CHOMP's obstacle cost at `qRad` over every checked geom pair closer than `epsilonM`, with its
   * joint-space gradient added into `gradOut`: c(d) = -d + eps/2 for d < 0, (d - eps)^2 / (2 eps)
   * for 0 <= d < eps, 0 beyond (Ratliff et al.), d from MuJoCo's geom distance. The gradient is a
   * forward difference per joint over the pairs in range: robust across penetration, where
   * closest-point normals flip. Pairs of two moving links count only within the collision margin:
   * links that sit close to each other by design would otherwise keep a cost no path can remove.
   */
  obstacleCost(qRad: ArrayLike<number>, epsilonM: number, gradOut: Float64Array): number {
    const q = Float64Array.from(qRad);
    this.setState(q);
    this.mj.mj_kinematics(this.model, this.data);
    const hinge = (d: number, eps: number) =>
      d < 0 ? -d + eps / 2 : d < eps ? ((d - eps) * (d - eps)) / (2 * eps) : 0;
    const active: { g1: number; g2: number; eps: number }[] = [];
    let cost = 0;
    for (const pair of this.pairs) {
      const eps = pair.self ? this.selfRangeM : epsilonM;
      const d = this.mj.mj_geomDistance(this.model, this.data, pair.g1, pair.g2, 2 * eps, this.fromTo);
      if (d >= 2 * eps) continue;
      active.push({ g1: pair.g1, g2: pair.g2, eps });
      cost += hinge(d, eps);
    }
    if (active.length === 0) return cost;
    const h = 1e-4;
    for (let j = 0; j < this.jointNames.length; j++) {
      const saved = q[j] ?? 0;
      q[j] = saved + h;
      this.setState(q);
      this.mj.mj_kinematics(this.model, this.data);
      let shifted = 0;
      for (const { g1, g2, eps } of active)
        shifted += hinge(this.mj.mj_geomDistance(this.model, this.data, g1, g2, 2 * eps, this.fromTo), eps);
      gradOut[j] = (gradOut[j] ?? 0) + (shifted - cost) / h;
      q[j] = saved;
    }
    return cost;
  }

  /** Frees the WebAssembly memory held by the model. */
  dispose(): void {
    this.fromTo.delete();
    this.data.delete();
    this.model.delete();
  }
}
