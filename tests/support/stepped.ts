/**
 * Tests on a clock they step (lib/clock.ts): the app in memory over a simulator whose timers, deadlines, joint
 * states and event rates all run on one {@link SteppedClock}, and the waits that move that clock instead of sleeping.
 * A motion takes the time of the clock it runs on, however long the machine needs to compute it, so the figures a test
 * asserts of it do not depend on the machine's load. Work done in the machine's time (planning, a worker's check, a
 * socket, a child process) is waited for while the clock runs on: the waits below also have bounds in that time.
 */
import assert from 'node:assert/strict';
import { SteppedClock } from '../../lib/clock.ts';
import { SimContext } from '../../lib/sim/context.ts';
import { type InMemory, type JointStates, jointStates } from './live.ts';
import {
  createTestApp,
  type SettingsOverrides,
  startTestServer,
  type TestApp,
  type TestServer,
  testConfig,
} from './server.ts';

/** How many turns of the event loop a step leaves for what it started (an event stream's reader in memory). */
const TURNS_PER_STEP = 1;

/** Lets the work a step of the clock started run on (a frame through an in-memory stream to its reader). */
async function turns(n = TURNS_PER_STEP): Promise<void> {
  for (let k = 0; k < n; k++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** The app in memory with its simulator, event bus and progress on `clock` (a fresh stepped clock by default). */
export async function createSteppedApp(
  overrides: SettingsOverrides = {},
  clock: SteppedClock = new SteppedClock(0, Date.now()),
): Promise<{ app: TestApp; clock: SteppedClock }> {
  const context = await SimContext.create(await testConfig(overrides), clock);
  return { app: await createTestApp(overrides, { context, clock }), clock };
}

/**
 * A live server (a real socket) whose simulator, event bus and progress run on `clock`: what must go over a socket
 * (a client that disconnects) does, in the machine's time, while the motion runs on the clock the test steps.
 */
export async function startSteppedServer(
  overrides: SettingsOverrides = {},
  clock: SteppedClock = new SteppedClock(0, Date.now()),
): Promise<{ server: TestServer; clock: SteppedClock }> {
  const context = await SimContext.create(await testConfig(overrides), clock);
  return { server: await startTestServer(overrides, { context, clock }), clock };
}

/**
 * The app as a target of tests/support/live.ts's helpers (send, post, getJson, jointStates): each request steps the
 * clock until it is answered (a move answers at its goal, a pause at rest). Requests sent together step it together.
 */
export function steppedTarget(app: TestApp, clock: SteppedClock): InMemory {
  return {
    request: (input, init) =>
      steppedUntilSettled(clock, app.request(input, init), `${init?.method ?? 'GET'} ${String(input)}`),
  };
}

/**
 * Steps `clock` by `stepMs` until `promise` settles; returns what it settled with. Fails once `limitMs` of the clock
 * and `machineMs` of the machine's time have passed: a request may also wait on work done in the machine's time (an
 * upload read, a check in a worker thread) while the clock runs ahead with nothing to do.
 */
export async function steppedUntilSettled<T>(
  clock: SteppedClock,
  promise: Promise<T>,
  what: string,
  limitMs = 60_000,
  stepMs = 2,
  machineMs = 60_000,
): Promise<T> {
  let settled = false;
  const watched = promise.finally(() => {
    settled = true;
  });
  watched.catch(() => undefined);
  const end = clock.nowMs() + limitMs;
  const machineEnd = performance.now() + machineMs;
  while (!settled) {
    if (clock.nowMs() >= end && performance.now() >= machineEnd)
      assert.fail(`${what}: not settled within ${limitMs} ms of the clock and ${machineMs} ms of the machine's`);
    await clock.advance(stepMs);
    await turns();
  }
  return watched;
}

/**
 * Polls `get` each `stepMs` of `clock` (the clock moved between polls, no sleeping) until `ok` holds; fails with the
 * last value after `limitMs` of the clock. `machineMs`: what is waited for is also work done in the machine's time (a
 * request over a socket, a worker thread, a child process) while the clock runs ahead: the wait lasts at least that
 * long in the machine's time too, however loaded the machine; each step then also leaves a millisecond of the machine's
 * time (a busy loop of steps would hold a core the awaited work needs on a small machine).
 */
export async function waitOnClock<T>(
  clock: SteppedClock,
  what: string,
  get: () => Promise<T>,
  ok: (value: T) => boolean,
  limitMs = 20_000,
  stepMs = 10,
  machineMs = 0,
): Promise<T> {
  const end = clock.nowMs() + limitMs;
  const machineEnd = performance.now() + machineMs;
  for (;;) {
    const value = await get();
    if (ok(value)) return value;
    if (clock.nowMs() >= end && performance.now() >= machineEnd)
      assert.fail(`timed out waiting for ${what} (${limitMs} ms of the clock); last: ${JSON.stringify(value)}`);
    await clock.advance(stepMs);
    await turns();
    // Waiting on the machine's work: a millisecond of its time each step, so as not to hold a core it needs.
    if (machineMs > 0) await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/**
 * Waits (on `clock`, in steps of `stepMs`) until some joint moves; `machineMs` as in {@link waitOnClock}: the motion
 * is planned or checked in the machine's time (a planner, a worker thread) while the clock runs on.
 */
export function movingOnClock(
  app: InMemory,
  clock: SteppedClock,
  limitMs = 20_000,
  stepMs = 2,
  machineMs = 15_000,
): Promise<JointStates> {
  return waitOnClock(
    clock,
    'the arm moving',
    () => jointStates(app),
    (s) => s.velocity.some((v) => v !== 0),
    limitMs,
    stepMs,
    machineMs,
  );
}

/**
 * Waits (on `clock`, in steps of 2 ms) until the arm rests: every joint velocity 0 on two polls a step apart, at the
 * same position. One poll is not enough on a stepped clock: its steps fall on the controller's periods, so a sample
 * at the instant a trajectory reverses through a point (its velocity exactly 0 there) is no rare coincidence.
 */
export async function atRestOnClock(app: InMemory, clock: SteppedClock, limitMs = 5000): Promise<JointStates> {
  let previous: JointStates | undefined;
  const still = (s: JointStates) => s.velocity.every((v) => v === 0);
  const rested = await waitOnClock(
    clock,
    'the arm at rest',
    async () => {
      const now = await jointStates(app);
      const pair = { previous, now };
      previous = now;
      return pair;
    },
    ({ previous: p, now }) =>
      p !== undefined && still(p) && still(now) && p.position.every((q, j) => q === now.position[j]),
    limitMs,
    2,
  );
  return rested.now;
}
