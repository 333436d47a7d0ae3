/**
 * The dead-man (issue 25): a client that disconnects during a move, over a real socket. The HTTP
 * request that started a move is gone (REST), or the connection that carried an MCP tool call
 * closes without a cancel (plain JSON and SSE answers): the arm decelerates within its acceleration
 * limits and comes to rest short of the goal, and the trajectory log says why. With
 * `safety.dead_man: false` the motion goes on to its goal. The sockets are real (the disconnect is the machine's);
 * the simulator runs on a clock the test steps (tests/support/stepped.ts), so the motion's timing is the clock's.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { RobotContext } from '../../lib/ros/context.ts';
import type { JointStateMsg } from '../../lib/ros/messages.ts';
import type { SteppedClock } from '../../lib/clock.ts';
import { type JointStates, jointStates, LOG_LINE, logLines, WORK } from '../support/live.ts';
import { openMcpSession } from '../support/mcp.ts';
import type { TestServer } from '../support/server.ts';
import { startSteppedServer, steppedUntilSettled, waitOnClock } from '../support/stepped.ts';

/** joint1 1.5 rad from work: about 2 s at speed 0.5. */
const GOAL = WORK.map((q, j) => (j === 0 ? q + 1.5 : q));
const CONTROLLER_RATE_HZ = 500;
/** The clock of the server under test (each describe starts its own). */
let clock: SteppedClock;
const sleep = (ms: number) => clock.advance(ms);
/** Waits (on the clock) until every joint velocity is 0. */
const atRest = (server: TestServer, limitMs = 5000): Promise<JointStates> =>
  waitOnClock(
    clock,
    'the arm at rest',
    () => jointStates(server),
    (s) => s.velocity.every((v) => v === 0),
    limitMs,
    2,
  );

interface Sample {
  readonly tS: number;
  readonly position: readonly number[];
  readonly velocity: readonly number[];
}

/** Records the context's /joint_states as a ROS subscriber would (stamped), until the returned stop is called. */
function record(context: RobotContext): { samples: Sample[]; stop: () => void } {
  const samples: Sample[] = [];
  const stop = context.subscribe('/joint_states', (msg) => {
    const { header, position, velocity } = msg as JointStateMsg;
    samples.push({
      tS: header.stamp.sec + header.stamp.nanosec / 1e9,
      position: [...position],
      velocity: [...velocity],
    });
  });
  return { samples, stop };
}

/** Sends `body` as a POST over its own socket; `drop()` closes the socket, `answered()` says whether the response ended. */
function openPost(
  url: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): { drop: () => void; answered: () => boolean } {
  const target = new URL(path, url);
  let answered = false;
  const request = http.request(target, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
  });
  // An answer is a whole response (an SSE stream opens at once; its end is the answer).
  request.on('response', (response) => {
    response.on('end', () => {
      answered = true;
    });
    response.resume();
  });
  request.on('error', () => undefined);
  request.end(JSON.stringify(body));
  return { drop: () => request.destroy(), answered: () => answered };
}

/** Waits until joint1 moves faster than `speed` rad/s; returns that sample. */
async function movingFast(samples: Sample[], speed = 0.4): Promise<Sample> {
  const last = await waitOnClock(
    clock,
    `joint1 faster than ${speed} rad/s`,
    async () => samples.at(-1),
    (s) => s !== undefined && Math.abs(s.velocity[0] ?? 0) > speed,
    15_000,
    2,
    // The request crosses a real socket (and a trajectory's check a worker thread) in the machine's time.
    15_000,
  );
  return last as Sample;
}

/**
 * Asserts that between consecutive joint states no joint changed its velocity faster than its
 * acceleration limit allows (one controller period of slack: a state is current at its update).
 */
function assertWithinAcceleration(samples: readonly Sample[], maxAcc: readonly number[]): void {
  const slackS = 2 / CONTROLLER_RATE_HZ;
  for (let k = 1; k < samples.length; k++) {
    const a = samples[k - 1];
    const b = samples[k];
    if (!a || !b) continue;
    const dt = b.tS - a.tS;
    for (let j = 0; j < 7; j++) {
      const dv = Math.abs((b.velocity[j] ?? 0) - (a.velocity[j] ?? 0));
      const bound = (maxAcc[j] ?? 0) * (dt + slackS) + 1e-9;
      assert.ok(
        dv <= bound,
        `joint${j + 1} changed velocity by ${dv.toFixed(4)} rad/s in ${(dt * 1000).toFixed(1)} ms (limit allows ${bound.toFixed(4)})`,
      );
    }
  }
}

const logText = async (server: TestServer) =>
  (await logLines(server.url, '/trajectory/logs', 200)).map((l) => LOG_LINE.exec(l)?.[2] ?? l);

/** Back to work at full speed, so the next case starts from the same place. */
async function backToWork(server: TestServer): Promise<void> {
  const res = await steppedUntilSettled(
    clock,
    fetch(`${server.url}/robot/move/joints`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ joints: WORK, speed: 1 }),
    }),
    'the move back to work',
  );
  assert.equal(res.status, 200, await res.text());
}

/**
 * Starts a move with `start`, drops its connection while joint1 moves fast, and checks: the arm
 * decelerates within its limits and rests short of the goal, and the log names `reason`.
 */
async function dropMidMove(
  server: TestServer,
  start: () => { drop: () => void; answered: () => boolean },
  reason: RegExp,
): Promise<void> {
  const recording = record(server.context);
  try {
    const call = start();
    const fast = await movingFast(recording.samples);
    assert.equal(call.answered(), false, 'no answer before the motion ends');
    call.drop();
    // The last state published before the drop (test and server share this process): the clock of
    // the bound below starts here, not when the test saw the arm move fast (its own polling delay).
    const dropped = recording.samples.length;
    const atDrop = recording.samples[dropped - 1] ?? fast;
    // A generous bound for the polling only; how soon the arm came to rest is checked on the stamps.
    const rest = await atRest(server, 10_000);
    await sleep(100);
    const after = recording.samples.slice(Math.max(0, dropped - 1));
    assertWithinAcceleration(recording.samples, server.context.limits.maxAccRadS2);
    const j1 = rest.position[0] ?? 0;
    assert.ok(
      j1 < (GOAL[0] ?? 0) - 0.3,
      `the arm stopped short of the goal: joint1 at ${j1.toFixed(3)} (goal ${GOAL[0]})`,
    );
    // Braking from the speed at the drop takes v / a; the rest is the time the drop took to be noticed.
    const v0 = Math.abs(atDrop.velocity[0] ?? 0);
    const brakeS = v0 / (server.context.limits.maxAccRadS2[0] ?? 1);
    const firstRest = after.find((s) => s.velocity.every((v) => v === 0));
    assert.ok(firstRest, 'a joint state at rest was published');
    const restAfterS = firstRest.tS - atDrop.tS;
    assert.ok(
      restAfterS < brakeS + 1.0,
      `at rest ${restAfterS.toFixed(3)} s after the drop (braking takes ${brakeS.toFixed(3)} s)`,
    );
    await sleep(200);
    const held = (await fetch(`${server.url}/robot/joint_states`).then((r) => r.json())) as { position: number[] };
    assert.deepEqual(held.position, rest.position, 'it holds');
    const lines = await logText(server);
    assert.ok(
      lines.some((l) => l.startsWith('dead-man: ') && reason.test(l)),
      `the log says why:\n${lines.slice(-15).join('\n')}`,
    );
    assert.ok(lines.includes('stop: hold point at the current position published'), lines.slice(-15).join('\n'));
  } finally {
    recording.stop();
  }
  await backToWork(server);
}

/** An MCP session opened by hand: the headers of its later requests. */
const mcpSession = async (url: string) =>
  (await openMcpSession(url, { name: 'dead-man test', headers: { accept: 'application/json, text/event-stream' } }))
    .headers;

describe('the dead-man: a client that disconnects during a move stops the arm', () => {
  let server: TestServer;
  before(async () => {
    ({ server, clock } = await startSteppedServer({ sim: { controller_rate_hz: CONTROLLER_RATE_HZ } }));
    await atRest(server);
  });
  after(async () => {
    await server.close();
  });

  it('REST: the HTTP request of POST /robot/move/joints is gone: decelerates within the limits, rests short of the goal, the log says why', async () => {
    await dropMidMove(
      server,
      () => openPost(server.url, '/robot/move/joints', { joints: GOAL, speed: 0.5 }),
      /the client disconnected before the motion finished/,
    );
  });

  it('REST: the connection of POST /trajectory/send with wait closes: the trajectory is stopped likewise', async () => {
    await dropMidMove(
      server,
      () =>
        openPost(server.url, '/trajectory/send', { points: [{ positions: GOAL, time_from_start: 2.5 }], wait: true }),
      /the client disconnected before the motion finished/,
    );
  });

  it('MCP: a move_to_joints call answered in plain JSON is abandoned (its connection closes, no cancel): stopped', async () => {
    const headers = await mcpSession(server.url);
    await dropMidMove(
      server,
      () =>
        openPost(
          server.url,
          '/mcp/mcp',
          {
            jsonrpc: '2.0',
            id: 7,
            method: 'tools/call',
            params: { name: 'move_to_joints', arguments: { joints: GOAL, speed: 0.5 } },
          },
          { ...headers, accept: 'application/json' },
        ),
      /the MCP client abandoned the call/,
    );
  });

  it('MCP: a call streaming its progress (SSE) is abandoned: stopped', async () => {
    const headers = await mcpSession(server.url);
    await dropMidMove(
      server,
      () =>
        openPost(
          server.url,
          '/mcp/mcp',
          {
            jsonrpc: '2.0',
            id: 8,
            method: 'tools/call',
            params: { name: 'move_to_joints', arguments: { joints: GOAL, speed: 0.5 }, _meta: { progressToken: 'p8' } },
          },
          { ...headers, accept: 'application/json, text/event-stream' },
        ),
      /the MCP client abandoned the call/,
    );
  });
});

describe('with safety.dead_man false, a motion outlives its caller', () => {
  let server: TestServer;
  before(async () => {
    ({ server, clock } = await startSteppedServer({ sim: { time_scale: 4 }, safety: { dead_man: false } }));
    await atRest(server);
  });
  after(async () => {
    await server.close();
  });

  it('REST: the move goes on to its goal after the client disconnected; the log says so', async () => {
    const call = openPost(server.url, '/robot/move/joints', { joints: GOAL, speed: 0.5 });
    await waitOnClock(
      clock,
      'the arm moving',
      () => fetch(`${server.url}/robot/joint_states`).then((r) => r.json() as Promise<{ velocity: number[] }>),
      (s) => Math.abs(s.velocity[0] ?? 0) > 0.2,
      5000,
      5,
      15_000,
    );
    call.drop();
    await sleep(50);
    const rest = await atRest(server, 5000);
    assert.ok(Math.abs((rest.position[0] ?? 0) - (GOAL[0] ?? 0)) < 1e-3, `at the goal: joint1 ${rest.position[0]}`);
    const lines = await logText(server);
    assert.ok(
      lines.some((l) =>
        /the client disconnected before the motion finished .*; the motion goes on \(dead_man off\)$/.test(l),
      ),
      lines.slice(-10).join('\n'),
    );
    assert.ok(!lines.some((l) => l.startsWith('dead-man: ')), 'nothing was stopped');
  });
});
