// The live page at /: the arm in 3D (three.js + urdf-loader, from this server) moving with the
// joint_state events of GET /events, the joint angles, the TCP pose, the current motion, the
// sequence status, the last log lines, the named positions as hold-to-run buttons and the teach
// form (positions.js), the jog panel (jog-panel.js) and a Stop button; the safety envelope of
// GET /robot/safety in the view, its legend and the top bar (envelope.js), read again each time
// the event stream connects.
// The token is typed once, kept in sessionStorage (this tab only) and sent as an Authorization
// header; never in a URL. EventSource cannot send headers, so the stream is read with fetch().
// Armed: until a read call answers 200 (no token needed, or the one held accepted), every control
// (STOP included) says it cannot act and why (`data-armed` on the body, aria-disabled on each).
import * as THREE from 'three';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
import { CSS2DRenderer } from 'three/examples/jsm/renderers/CSS2DRenderer.js';
import URDFLoader from 'urdf-loader';
import { envelopeView } from './envelope.js';
import { jogPanel } from './jog-panel.js';
import { positionsPanel } from './positions.js';

const TOKEN_KEY = 'armgate.token';
const JOINTS = ['joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6', 'joint7'];
const LOG_LINES = 12;
const POSE_EVERY_MS = 200;
const RECONNECT_MS = 2000;

const $ = (selector) => document.querySelector(selector);
const status = $('[data-connection]');
const tokenForm = $('form.token');
const tokenInput = $('#token');
const tokenError = $('form.token .error');
const motionEl = $('[data-motion-state]');
const sequenceEl = $('[data-sequence-status]');
const logsEl = $('[data-logs]');
const speedInput = $('[data-speed]');
const speedOut = $('[data-speed-value]');
const overrideInput = $('[data-override]');
const overrideOut = $('[data-override-value]');
const jointCells = JOINTS.map((name) => $(`[data-joint="${name}"]`));
const radCells = JOINTS.map((name) => $(`[data-rad-of="${name}"]`));

let token = sessionStorage.getItem(TOKEN_KEY) ?? '';
let armed = false;
const lock = $('[data-lock]');
const lockRow = $('[data-lock-row]');
let robot;
let latest;
let jointsChanged = false;

function setStatus(state, text) {
  status.dataset.connection = state;
  status.textContent = text;
}

function headers(extra = {}) {
  return token ? { authorization: `Bearer ${token}`, ...extra } : extra;
}

/**
 * Arms or disarms every control (`[data-control]`, the jog buttons and the positions included): unarmed, each
 * is aria-disabled (a slider disabled) and described by the lock note in the top bar, which says why.
 */
function setArmed(on, why) {
  // Disarmed (a 401 on any call) while a jog button is held: let go.
  if (!on && armed) jog.stopped();
  armed = on;
  document.body.dataset.armed = String(on);
  lockRow.hidden = on;
  lock.textContent = on ? '' : why;
  for (const el of document.querySelectorAll('[data-control]')) {
    // The lock note first among what describes the control (a position's hold hint stays after it).
    const described = (el.getAttribute('aria-describedby') ?? '').split(' ').filter((id) => id && id !== 'lock');
    if (!on) described.unshift('lock');
    if (described.length > 0) el.setAttribute('aria-describedby', described.join(' '));
    else el.removeAttribute('aria-describedby');
    if (on) el.removeAttribute('aria-disabled');
    else el.setAttribute('aria-disabled', 'true');
    if (el.tagName === 'INPUT' && el.type === 'range') el.disabled = !on;
  }
}

/** A control used while unarmed: nothing is sent; the lock note flashes and the token field takes the focus. */
function refuse() {
  lock.classList.remove('flash');
  void lock.offsetWidth;
  lock.classList.add('flash');
  if (!tokenForm.hidden) tokenInput.focus();
}

/** A request to the API with the token; a 401 asks for the token (again, when one was sent). */
async function api(path, init = {}) {
  const response = await fetch(path, { ...init, headers: headers(init.headers) });
  if (response.status === 401) askToken();
  return response;
}

/** Shows the token form: a first visit is asked for the token; a token the server refused is said to be so. */
function askToken() {
  setStatus('token', 'token needed');
  setArmed(false, token ? 'not armed: token refused' : 'not armed: token needed');
  tokenError.textContent = token
    ? 'the token was refused; enter it again'
    : 'this server needs its token (web.token) to show the arm and use its controls; enter it';
  tokenForm.hidden = false;
  tokenInput.focus();
}

tokenForm.addEventListener('submit', (event) => {
  event.preventDefault();
  token = tokenInput.value.trim();
  sessionStorage.setItem(TOKEN_KEY, token);
  tokenInput.value = '';
  tokenForm.hidden = true;
  void start();
});

// ---- the 3D view ----------------------------------------------------------------------------

const host = $('.canvas-host');
const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
renderer.setPixelRatio(Math.min(window.devicePixelRatio, 2));
host.append(renderer.domElement);
renderer.domElement.setAttribute('role', 'img');
renderer.domElement.setAttribute('aria-label', 'The arm as the joint states show it');
// The keep-out zones' names, over the canvas (the legend holds the same names for screen readers).
const labels = new CSS2DRenderer();
labels.domElement.className = 'labels';
labels.domElement.setAttribute('aria-hidden', 'true');
host.append(labels.domElement);
const scene = new THREE.Scene();
scene.background = new THREE.Color(0xe9eef3);
const camera = new THREE.PerspectiveCamera(45, 1, 0.01, 50);
camera.up.set(0, 0, 1);
camera.position.set(1.45, -1.25, 1.0);
const controls = new OrbitControls(camera, renderer.domElement);
controls.target.set(0.15, 0, 0.5);
controls.update();
scene.add(new THREE.HemisphereLight(0xffffff, 0x8a96a3, 2.2));
const sun = new THREE.DirectionalLight(0xffffff, 1.6);
sun.position.set(2, -1, 3);
scene.add(sun);
const grid = new THREE.GridHelper(2, 20, 0x8a96a3, 0xc2cad2);
grid.rotation.x = Math.PI / 2;
scene.add(grid);
scene.add(new THREE.AxesHelper(0.25));

function resize() {
  const { clientWidth: w, clientHeight: h } = host;
  if (w === 0 || h === 0) return;
  renderer.setSize(w, h, false);
  labels.setSize(w, h);
  camera.aspect = w / h;
  camera.updateProjectionMatrix();
}
new ResizeObserver(resize).observe(host);

function render() {
  if (robot && latest && jointsChanged) {
    JOINTS.forEach((name, j) => {
      robot.setJointValue(name, latest.position[j]);
    });
    jointsChanged = false;
  }
  renderer.render(scene, camera);
  labels.render(scene, camera);
  requestAnimationFrame(render);
}
requestAnimationFrame(render);

const envelope = envelopeView({ scene, legend: $('[data-legend]'), bar: $('[data-envelope]') });

/** Reads GET /robot/safety and draws it; a failure is shown in the top bar. */
async function loadSafety() {
  try {
    const response = await api('/robot/safety');
    if (!response.ok) throw new Error(`GET /robot/safety: ${response.status}`);
    envelope.show(await response.json());
  } catch (error) {
    envelope.fail(error.message);
  }
}

const ARM = new THREE.MeshStandardMaterial({ color: 0xf28a1f, roughness: 0.55, metalness: 0.1 });
const FOOT = new THREE.MeshStandardMaterial({ color: 0x59626b, roughness: 0.7 });

/** Loads the URDF the service uses; without visual geometry, its collision shapes are drawn. */
async function loadRobot() {
  const response = await api('/ui/robot.urdf');
  if (!response.ok) throw new Error(`GET /ui/robot.urdf: ${response.status}`);
  const xml = await response.text();
  const loader = new URDFLoader();
  const hasVisuals = /<visual[\s>]/.test(xml);
  loader.parseVisual = hasVisuals;
  loader.parseCollision = !hasVisuals;
  loader.packages = (pkg) => `/ui/package/${pkg}`;
  // Meshes (package:// paths) are fetched with the token, then parsed by three's loaders.
  loader.loadMeshCb = (path, _manager, material, done) => {
    loadMesh(path, material).then(
      (mesh) => done(mesh),
      (error) => done(null, error),
    );
  };
  const model = loader.parse(xml);
  model.traverse((object) => {
    if (object.isURDFCollider) object.visible = true;
    // The bundled model's visuals are its collision shapes in these two colours (armgate_orange, armgate_foot): drawn
    // with the page's own materials, as its collision shapes are when a URDF has no visuals.
    const own = /^armgate_(orange|foot)$/.test(object.material?.name ?? '');
    if (object.isMesh && (!hasVisuals || own))
      object.material = object.parent?.parent?.name === 'base_link' ? FOOT : ARM;
  });
  if (robot) scene.remove(robot);
  robot = model;
  scene.add(robot);
  jointsChanged = true;
}

async function loadMesh(path, material) {
  const response = await api(path);
  if (!response.ok) throw new Error(`${path}: ${response.status}`);
  if (/\.stl$/i.test(path)) {
    const { STLLoader } = await import('three/examples/jsm/loaders/STLLoader.js');
    return new THREE.Mesh(new STLLoader().parse(await response.arrayBuffer()), material);
  }
  const { ColladaLoader } = await import('three/examples/jsm/loaders/ColladaLoader.js');
  return new ColladaLoader().parse(await response.text(), path).scene;
}

// ---- panels ---------------------------------------------------------------------------------

function showJoints(position) {
  for (let j = 0; j < JOINTS.length; j++) {
    const rad = position[j];
    const cell = jointCells[j];
    cell.dataset.rad = String(rad);
    cell.textContent = ((rad * 180) / Math.PI).toFixed(2);
    radCells[j].textContent = rad.toFixed(4);
  }
}

function showMotion(motion) {
  motionEl.dataset.motionState = motion.state;
  motionEl.dataset.motionId = String(motion.id);
  motionEl.textContent = `#${motion.id} ${motion.kind} ${motion.state}: ${motion.message}`;
}

function showSequence(seq) {
  sequenceEl.dataset.sequenceStatus = seq.status;
  const parts = [seq.status];
  if (seq.status === 'running') parts.push(`iteration ${seq.iteration} of ${seq.n_iterations}`, `at ${seq.point}`);
  if (seq.status === 'finished') parts.push(`return code ${seq.returncode}`);
  sequenceEl.textContent = parts.join(', ');
}

function addLog(source, line) {
  const item = document.createElement('li');
  const src = document.createElement('span');
  src.className = 'src';
  src.textContent = `${source} `;
  item.append(src, line);
  logsEl.append(item);
  while (logsEl.children.length > LOG_LINES) logsEl.firstElementChild.remove();
}

let poseBusy = false;
let poseAt = 0;
let jointsChangedSincePose = true;
async function refreshPose() {
  if (status.dataset.connection !== 'live') return;
  if (poseBusy || !jointsChangedSincePose || performance.now() - poseAt < POSE_EVERY_MS) return;
  poseBusy = true;
  jointsChangedSincePose = false;
  poseAt = performance.now();
  try {
    const response = await api('/robot/pose');
    if (!response.ok) return;
    const pose = await response.json();
    const { x, y, z } = pose.position;
    const { a, b, c } = pose.orientation.euler_deg;
    const set = (key, text) => {
      $(`[data-tcp="${key}"]`).textContent = text;
    };
    set('x', `${x.toFixed(4)} m`);
    set('y', `${y.toFixed(4)} m`);
    set('z', `${z.toFixed(4)} m`);
    set('a', `${a.toFixed(2)}°`);
    set('b', `${b.toFixed(2)}°`);
    set('c', `${c.toFixed(2)}°`);
    $('[data-tcp-frame]').textContent = `(${pose.frame_id})`;
  } finally {
    poseBusy = false;
  }
}
setInterval(() => void refreshPose().catch(() => undefined), POSE_EVERY_MS);

speedInput.addEventListener('input', () => {
  speedOut.textContent = Number(speedInput.value).toFixed(2);
});

const positions = positionsPanel({
  root: $('[data-named]'),
  api,
  speed: () => Number(speedInput.value),
  armed: () => armed,
  refuse,
  log: addLog,
});
/** (Re)loads the named positions (at start, and on a `positions` event: taught or deleted anywhere); new buttons armed as the rest. */
async function loadPositions() {
  await positions.load();
  setArmed(armed, lock.textContent);
}
const jog = jogPanel({ root: $('[data-jog]'), token: () => token, armed: () => armed, refuse });

/** STOP: any held jog is let go first (no jog command after the stop), then POST /stop. */
async function stop() {
  if (!armed) return refuse();
  jog.stopped();
  const response = await api('/stop', { method: 'POST' });
  // The stop event brings the report; only a failure is shown here.
  if (!response.ok) addLog('stop', `POST /stop: ${response.status}`);
}
$('[data-action="stop"]').addEventListener('click', () => void stop());
document.addEventListener('keydown', (event) => {
  if (event.key === 'Escape') void stop();
});

/** Sends a pendant command; a refusal (409 nothing paused, 403 role, 503 backend) is shown in the log. */
async function pendant(what, path, init) {
  if (!armed) {
    refuse();
    return new Response(null, { status: 401 });
  }
  const response = await api(path, init);
  if (!response.ok) {
    const body = await response.json().catch(() => ({}));
    addLog(what, `${response.status} ${typeof body.detail === 'string' ? body.detail : ''}`);
  }
  return response;
}

function showOverride(percent) {
  overrideInput.value = String(percent);
  overrideOut.textContent = `${percent} %`;
}

async function loadOverride() {
  const response = await api('/robot/override');
  if (response.ok) showOverride((await response.json()).percent);
}

$('[data-action="pause"]').addEventListener('click', () => void pendant('pause', '/robot/pause', { method: 'POST' }));
$('[data-action="resume"]').addEventListener(
  'click',
  () => void pendant('resume', '/robot/resume', { method: 'POST' }),
);
overrideInput.addEventListener('input', () => {
  overrideOut.textContent = `${overrideInput.value} %`;
});
// Sent when the slider is let go (or a key changes it), not at every step of a drag; one request at a
// time, the latest value last (key presses faster than the answers must not land out of order).
let overrideWanted;
let overrideSending = false;
async function sendOverride() {
  if (overrideSending) return;
  overrideSending = true;
  try {
    while (overrideWanted !== undefined) {
      const percent = overrideWanted;
      overrideWanted = undefined;
      const response = await pendant('override', '/robot/override', {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ percent }),
      });
      // Refused (raising it needs operate): the slider shows what is in force.
      if (!response.ok && overrideWanted === undefined) await loadOverride();
    }
  } finally {
    overrideSending = false;
  }
}
overrideInput.addEventListener('change', () => {
  overrideWanted = Number(overrideInput.value);
  void sendOverride();
});

async function loadLogs() {
  logsEl.replaceChildren();
  for (const [source, path] of [
    ['trajectory', '/trajectory/logs?n=6'],
    ['sequence', '/sequences/logs?n=6'],
  ]) {
    const response = await api(path);
    if (response.ok) for (const line of (await response.json()).lines) addLog(source, line);
  }
}

// ---- the event stream -----------------------------------------------------------------------

function onEvent(type, data) {
  if (type === 'joint_state') {
    latest = data;
    jointsChanged = true;
    jointsChangedSincePose = true;
    showJoints(data.position);
  } else if (type === 'motion') showMotion(data);
  else if (type === 'sequence') showSequence(data);
  else if (type === 'trajectory_log') addLog('trajectory', data.line);
  else if (type === 'sequence_log') addLog('sequence', data.line);
  else if (type === 'stop') {
    // A stop from anywhere ends a held jog here too: a new jog needs a new press.
    jog.stopped();
    addLog('stop', data.message);
  } else if (type === 'override' && !overrideSending) showOverride(data.percent);
  else if (type === 'positions') void loadPositions();
  else if (type === 'jog')
    addLog('jog', data.state === 'started' ? `started over ${data.via}: ${data.target}` : `ended: ${data.reason}`);
  else if (type === 'pause') addLog('pause', `${data.state}: ${data.what}`);
  else if (type === 'resume')
    addLog('resume', data.ended ? `${data.what}: ${data.ended}` : `${data.what} at ${data.override_percent} %`);
}

/** Reads GET /events with fetch (the Authorization header) and parses the SSE frames. */
async function stream() {
  const response = await fetch('/events?rate_hz=50', { headers: headers({ accept: 'text/event-stream' }) });
  if (response.status === 401) {
    askToken();
    return false;
  }
  if (!response.ok || !response.body) throw new Error(`GET /events: ${response.status}`);
  setStatus('live', 'live');
  // The envelope may have changed while the page was away (a restart with other settings).
  void loadSafety();
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let type = 'message';
      let data = '';
      for (const line of frame.split('\n')) {
        if (line.startsWith('event: ')) type = line.slice(7);
        else if (line.startsWith('data: ')) data += line.slice(6);
      }
      if (data) onEvent(type, JSON.parse(data));
      end = buffer.indexOf('\n\n');
    }
  }
  return true;
}

let running = false;
async function start() {
  if (running) return;
  running = true;
  setStatus('connecting', 'connecting');
  try {
    // The first request tells whether the token is needed (or wrong).
    const seq = await api('/sequences/status');
    if (seq.status === 401) return;
    // Answered: no token is needed, or the one held is accepted.
    setArmed(true, '');
    if (seq.ok) showSequence(await seq.json());
    await loadLogs();
    await Promise.all([
      loadPositions(),
      loadOverride(),
      loadRobot().catch((error) => {
        const note = $('.view-note');
        note.hidden = false;
        note.textContent = `the robot model could not be loaded: ${error.message}`;
      }),
    ]);
    for (;;) {
      try {
        if (!(await stream())) return;
        setStatus('connecting', 'reconnecting');
      } catch (error) {
        setStatus('error', `disconnected: ${error.message}`);
      }
      await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
    }
  } finally {
    running = false;
  }
}

setArmed(false, 'not armed: connecting');
void start();
