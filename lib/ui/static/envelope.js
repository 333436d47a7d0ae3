// The safety envelope on the live page: GET /robot/safety drawn in the 3D view (the workspace box
// the TCP never leaves as a blue wireframe; each keep-out box no link enters as a translucent red
// box with its name as a label), listed in the legend over the view (`data-zone="workspace"`,
// `data-zone="<name>"`) and summed up in the top bar (`data-envelope`: unknown, none, set, error).
// The boxes are axis-aligned in the planning frame, drawn in the model's root frame (the planning
// frame of the bundled model).
import * as THREE from 'three';
import { CSS2DObject } from 'three/examples/jsm/renderers/CSS2DRenderer.js';

const WORKSPACE_COLOR = 0x0b63b5;
const KEEP_OUT_COLOR = 0xd62828;
const KEEP_OUT_EDGE = 0x9e1a1a;
/** Names in the top bar up to this many characters in all; a count beyond. */
const NAMES_IN_BAR = 40;

const fillMaterial = new THREE.MeshBasicMaterial({
  color: KEEP_OUT_COLOR,
  transparent: true,
  opacity: 0.28,
  depthWrite: false,
  side: THREE.DoubleSide,
});
const keepOutEdges = new THREE.LineBasicMaterial({ color: KEEP_OUT_EDGE });
const workspaceEdges = new THREE.LineBasicMaterial({ color: WORKSPACE_COLOR });

const corner = (xyz) => `[${xyz.map((v) => v.toFixed(2)).join(', ')}]`;
const extent = (box) => `${corner(box.min)} to ${corner(box.max)} m`;

/** A box's size and centre from its corners (zero-size axes kept at 1 mm so they still draw). */
function boxGeometry(box) {
  const size = [0, 1, 2].map((i) => Math.max(box.max[i] - box.min[i], 1e-3));
  const geometry = new THREE.BoxGeometry(size[0], size[1], size[2]);
  geometry.translate(...[0, 1, 2].map((i) => (box.min[i] + box.max[i]) / 2));
  return geometry;
}

function legendItem(zone, kind, role, box) {
  const item = document.createElement('li');
  item.dataset.zone = zone;
  item.dataset.zoneKind = kind;
  const swatch = document.createElement('span');
  swatch.className = `swatch ${kind}`;
  swatch.setAttribute('aria-hidden', 'true');
  const name = document.createElement('strong');
  name.textContent = zone;
  const where = document.createElement('span');
  where.className = 'extent';
  where.textContent = extent(box);
  item.append(swatch, name, ` ${role}`, where);
  return item;
}

/**
 * The envelope's part of the page. `scene` gets one group (replaced on each `show`); `legend` is
 * the `<details>` over the view, with its list (`[data-zones]`) and its show/hide checkbox
 * (`[data-envelope-toggle]`); `bar` the top bar's line.
 */
export function envelopeView({ scene, legend, bar }) {
  const list = legend.querySelector('[data-zones]');
  const toggle = legend.querySelector('[data-envelope-toggle]');
  const group = new THREE.Group();
  group.name = 'safety envelope';
  scene.add(group);
  toggle.addEventListener('change', () => {
    group.visible = toggle.checked;
  });

  const setBar = (state, text, detail = '') => {
    bar.dataset.envelope = state;
    bar.textContent = text;
    bar.title = detail;
  };

  /** Draws `envelope` (GET /robot/safety's body) in place of the one drawn before. */
  function show(envelope) {
    for (const child of [...group.children]) {
      group.remove(child);
      child.traverse((object) => {
        object.geometry?.dispose();
        if (object.isCSS2DObject) object.element.remove();
      });
    }
    const items = [];
    const { workspace, keep_out: keepOut = [] } = envelope;
    if (workspace) {
      const wire = new THREE.LineSegments(new THREE.EdgesGeometry(boxGeometry(workspace)), workspaceEdges);
      wire.name = 'workspace';
      group.add(wire);
      items.push(legendItem('workspace', 'workspace', 'the TCP stays inside', workspace));
    }
    for (const box of keepOut) {
      const zone = new THREE.Group();
      zone.name = box.name;
      const geometry = boxGeometry(box);
      zone.add(new THREE.Mesh(geometry, fillMaterial));
      zone.add(new THREE.LineSegments(new THREE.EdgesGeometry(geometry), keepOutEdges));
      const label = document.createElement('span');
      label.className = 'zone-label';
      label.textContent = box.name;
      label.setAttribute('aria-hidden', 'true');
      const tag = new CSS2DObject(label);
      tag.position.set((box.min[0] + box.max[0]) / 2, (box.min[1] + box.max[1]) / 2, box.max[2]);
      tag.center.set(0.5, 1);
      zone.add(tag);
      group.add(zone);
      items.push(legendItem(box.name, 'keep-out', 'keep-out, no link enters', box));
    }
    list.replaceChildren(...items);
    legend.hidden = items.length === 0;

    if (!workspace && keepOut.length === 0) {
      setBar('none', 'no envelope', 'GET /robot/safety: no workspace, no keep-out zones');
      return;
    }
    const parts = [];
    if (workspace) parts.push('workspace');
    if (keepOut.length > 0) {
      const names = keepOut.map((box) => box.name).join(', ');
      parts.push(
        names.length <= NAMES_IN_BAR
          ? `keep-out: ${names}`
          : `${keepOut.length} keep-out zone${keepOut.length === 1 ? '' : 's'}`,
      );
    }
    const detail = [
      workspace ? `workspace ${extent(workspace)}` : 'no workspace',
      ...keepOut.map((box) => `keep-out '${box.name}' ${extent(box)}`),
    ].join('; ');
    setBar('set', `envelope: ${parts.join('; ')}`, detail);
  }

  /** The envelope could not be read: the bar says so; what was drawn before stays. */
  function fail(message) {
    setBar('error', `envelope unknown: ${message}`, message);
  }

  return { show, fail };
}
