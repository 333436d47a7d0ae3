/**
 * End-to-end checks of a live armgate server with `robot.backend: ros2`, over HTTP only, so the
 * same checks run against the rclnodejs context on its stand-in (tests/ros/rcl-context.test.ts)
 * and against a real ROS 2 graph (the suites of tests/ros2, npm run test:ros2). They assume a 7-joint arm that starts
 * near the SRDF state `work` and can move between the positions below.
 */
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { JOINT_NAMES, sleep, WORK } from './live.ts';
import { sequenceForm } from './multipart.ts';

export { sleep, WORK };
export const JOINTS: readonly string[] = JOINT_NAMES;
export const OTHER = [0.4, 0.2, 0, -1.3, 0, 1.4, 0.2];

export interface Reply<T = unknown> {
  readonly status: number;
  readonly body: T;
}

export interface JointStateBody {
  name: string[];
  position: number[];
  velocity: number[];
  effort: number[];
}

export interface MotionBody {
  success: boolean;
  message: string;
}

/** A request with a JSON body (or none); the reply's JSON body. */
export async function call<T = unknown>(url: string, route: string, body?: unknown): Promise<Reply<T>> {
  const res = await fetch(
    `${url}${route}`,
    body === undefined
      ? {}
      : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) },
  );
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** PUT /robot/override {percent}; asserts 200. */
export async function setOverride(url: string, percent: number): Promise<void> {
  const res = await fetch(`${url}/robot/override`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ percent }),
  });
  assert.equal(res.status, 200, `PUT /robot/override ${percent}: ${await res.text()}`);
}

/** A reply's `detail` as text (503, 409 bodies). */
export function detailOf(reply: Reply): string {
  const detail = (reply.body as { detail?: unknown } | undefined)?.detail;
  return typeof detail === 'string' ? detail : JSON.stringify(reply.body);
}

export async function jointState(url: string): Promise<JointStateBody> {
  const reply = await call<JointStateBody>(url, '/robot/joint_states');
  assert.equal(reply.status, 200, `joint_states: ${detailOf(reply)}`);
  return reply.body;
}

export function assertNear(actual: readonly number[], expected: readonly number[], tol: number, what: string): void {
  assert.equal(actual.length, expected.length, what);
  for (const [i, v] of actual.entries())
    assert.ok(
      Math.abs(v - (expected[i] ?? Number.NaN)) <= tol,
      `${what}: [${i}] = ${v}, expected ${expected[i]} (+-${tol})`,
    );
}

/** GET /robot/joint_states: 200 with four arrays of 7, names J1..J7. */
export async function checkJointStates(url: string): Promise<JointStateBody> {
  const state = await jointState(url);
  assert.deepEqual(Object.keys(state).sort(), ['effort', 'name', 'position', 'velocity']);
  assert.deepEqual(state.name, JOINTS);
  for (const key of ['position', 'velocity', 'effort'] as const) {
    assert.equal(state[key].length, 7, key);
    assert.ok(state[key].every(Number.isFinite), key);
  }
  return state;
}

/** GET /robot/pose: 200, a unit quaternion with w >= 0, ABC in radians and degrees, base_link. */
export async function checkPose(url: string): Promise<{ x: number; y: number; z: number }> {
  const reply = await call<{
    frame_id: string;
    position: { x: number; y: number; z: number };
    orientation: {
      quaternion: { x: number; y: number; z: number; w: number };
      euler_rad: { a: number };
      euler_deg: { a: number };
    };
  }>(url, '/robot/pose');
  assert.equal(reply.status, 200, `pose: ${detailOf(reply)}`);
  const { quaternion: q, euler_rad, euler_deg } = reply.body.orientation;
  assert.ok(Math.abs(Math.hypot(q.x, q.y, q.z, q.w) - 1) < 1e-6 && q.w >= 0);
  assert.ok(Math.abs((euler_rad.a * 180) / Math.PI - euler_deg.a) < 1e-9);
  assert.equal(reply.body.frame_id, 'base_link');
  return reply.body.position;
}

/** GET /robot/positions: the SRDF states with 7 joints each, home, work and transport among them. */
export async function checkPositions(url: string): Promise<void> {
  const reply = await call<{ name: string; description: string; group: string; joints: Record<string, number> }[]>(
    url,
    '/robot/positions',
  );
  assert.equal(reply.status, 200, `positions: ${detailOf(reply)}`);
  const names = reply.body.map((p) => p.name);
  for (const name of ['home', 'work', 'transport']) assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
  for (const p of reply.body) assert.equal(Object.keys(p.joints).length, 7, `${p.name}: joints by name`);
}

/** A move that succeeds (200, success true). */
export async function moveOk(url: string, route: string, body: unknown): Promise<void> {
  const reply = await call<MotionBody>(url, route, body);
  assert.equal(reply.status, 200, `${route}: ${detailOf(reply)}`);
  assert.equal(reply.body.success, true, `${route}: ${reply.body.message}`);
}

/** move/joints to OTHER then move/named work: both succeed and the joint state shows each target. */
export async function checkMoves(url: string, tol = 2e-3): Promise<void> {
  await moveOk(url, '/robot/move/joints', { joints: OTHER, speed: 0.5 });
  assertNear((await jointState(url)).position, OTHER, tol, 'after move/joints');
  await moveOk(url, '/robot/move/named', { name: 'work', speed: 0.5 });
  assertNear((await jointState(url)).position, WORK, tol, 'after move/named work');
}

/**
 * A slow move stopped by POST /stop: the move answers 200 success false, /stop says the hold point
 * went out and the planner stopped, and the arm then holds still. The stop goes once `inFlight`
 * resolves (on a real graph: once the stack saw the move's goal; a fixed delay does not make sure
 * of it on a loaded machine, and a stop before the goal went out cancels nothing on the stack).
 */
export async function checkStopCancels(
  url: string,
  inFlight: () => Promise<unknown> = () => sleep(300),
): Promise<void> {
  const move = call<MotionBody>(url, '/robot/move/joints', { joints: OTHER, speed: 0.05 });
  await inFlight();
  const stop = await call<{ message: string; planner_stopped: boolean; hold_published: boolean }>(url, '/stop', {});
  assert.equal(stop.status, 200);
  assert.equal(stop.body.planner_stopped, true, stop.body.message);
  assert.equal(stop.body.hold_published, true, stop.body.message);
  const moved = await move;
  assert.equal(moved.status, 200);
  assert.equal(moved.body.success, false);
  await sleep(1000);
  const a = (await jointState(url)).position;
  await sleep(200);
  assertNear((await jointState(url)).position, a, 1e-4, 'holding after stop');
}

/** POST /trajectory/send: 200 sent, a move meanwhile is a 409, and the arm ends at the last point. */
export async function checkTrajectoryAndBusyRule(url: string, durationS: number, tol = 2e-3): Promise<void> {
  const start = (await jointState(url)).position;
  const end = start.map((q, i) => (i === 6 ? q + 0.1 : q));
  const sent = await call<{ status: string; points: number }>(url, '/trajectory/send', {
    points: [{ positions: end, time_from_start: durationS }],
  });
  assert.equal(sent.status, 200, detailOf(sent));
  assert.deepEqual([sent.body.status, sent.body.points], ['sent', 1]);
  const busy = await call(url, '/robot/move/joints', { joints: WORK, speed: 0.5 });
  assert.equal(busy.status, 409, 'a move while the trajectory executes');
  assert.match(detailOf(busy), /trajectory/);
  await sleep(durationS * 1000 + 800);
  assertNear((await jointState(url)).position, end, tol, 'at the end of the trajectory');
  const move = call<MotionBody>(url, '/robot/move/joints', { joints: OTHER, speed: 0.1 });
  await sleep(100);
  const during = await call(url, '/trajectory/send', { points: [{ positions: WORK, time_from_start: 2 }] });
  assert.equal(during.status, 409, 'a trajectory while a move runs');
  const second = await call(url, '/robot/move/joints', { joints: WORK, speed: 0.5 });
  assert.equal(second.status, 409, 'a second move while a move runs');
  assert.equal((await move).body.success, true);
}

/**
 * POST /sequences/start of one iteration (home WORK, waypoint OTHER) recording `topic` into
 * `bagName`; waits for the run to finish with returncode 0 and for the bag folder to hold its
 * MCAP file and metadata.yaml. Returns the run's log.
 */
export async function checkSequenceWithBag(
  url: string,
  bagFolder: string,
  topic = '/joint_states',
  limitMs = 60_000,
): Promise<string> {
  const form = sequenceForm(
    { home: { joints: WORK, speed: 0.5 }, waypoints: [{ joints: OTHER, speed: 0.5 }] },
    { n_iterations: '1', delay_between_iterations: '0', bag_path: path.basename(bagFolder), topics: topic },
  );
  const started = await fetch(`${url}/sequences/start`, { method: 'POST', body: form });
  assert.equal(started.status, 200, await started.text());
  let status: { status: string; returncode?: number } = { status: 'running' };
  for (const end = Date.now() + limitMs; status.status !== 'finished' && Date.now() < end; ) {
    await sleep(100);
    status = (await call<typeof status>(url, '/sequences/status')).body;
  }
  const logs = (await call<{ lines: string[] }>(url, '/sequences/logs?n=200')).body.lines.join('\n');
  assert.equal(status.returncode, 0, logs);
  assert.deepEqual((await readdir(bagFolder)).sort(), [`${path.basename(bagFolder)}_0.mcap`, 'metadata.yaml'].sort());
  return logs;
}

/** A sequence run's status as GET /sequences/status answers it. */
export type SequenceStatus = { status: string; returncode?: number; pid?: number };

/** Polls GET /sequences/status until the run finished (or `limitMs` passed); its status and its last 200 log lines. */
export async function finished(url: string, limitMs = 30_000): Promise<{ status: SequenceStatus; logs: string }> {
  let status: SequenceStatus = { status: 'running' };
  for (const end = Date.now() + limitMs; status.status !== 'finished' && Date.now() < end; ) {
    await sleep(50);
    status = (await call<SequenceStatus>(url, '/sequences/status')).body;
  }
  const logs = (await call<{ lines: string[] }>(url, '/sequences/logs?n=200')).body.lines.join('\n');
  return { status, logs };
}
