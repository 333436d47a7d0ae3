/**
 * Jogging: the time from a jog command to the arm's first motion (POST /robot/jog and a WebSocket message), the
 * braking after the dead-man fires at full jog speed (each joint, and the TCP along x: the jog engine on the
 * simulator's drive in stepped time, so the figures are exact), and POST /stop during a jog (timed from a child).
 */
import WebSocket from 'ws';
import { JogEngine } from '../lib/motion/jog.ts';
import { createSample } from '../lib/planning/trajectory.ts';
import { createClipInfo, driveStep } from '../lib/sim/drive.ts';
import { createFkWorkspace, forwardKinematics } from '../lib/kinematics/fk.ts';
import { startTestServer, type TestServer } from '../tests/support/server.ts';
import type { Section } from './section.ts';
import { stopClient } from './stop.ts';
import { summary } from './stats.ts';
import { type Table, verdict } from './table.ts';

const WORK = [0, 0, 0, -1.57, 0, 1.57, 0];
const SAMPLES = 30;
const TARGET_FIRST_MOTION_P99_MS = 20;
const TARGET_STOP_P99_MS = 20;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const JSON_TYPE = { 'content-type': 'application/json' };

/** Resolves with performance.now() when the arm starts moving under the jog. */
function firstMotion(server: TestServer): Promise<number> {
  return new Promise((resolve) => {
    const off = server.context.onJogEvents?.((event) => {
      if (event.state !== 'moving') return;
      off?.();
      resolve(performance.now());
    });
  });
}

/** Waits until no jog is in force and the arm is at rest. */
async function idle(server: TestServer): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const status = server.context.jogStatus?.();
    if (!status?.jogging && !status?.moving && server.services.jog?.owner() === undefined) return;
    await sleep(5);
  }
  throw new Error('the jog did not end');
}

async function restFirstMotion(server: TestServer, sign: number): Promise<number> {
  await idle(server);
  const moved = firstMotion(server);
  const t0 = performance.now();
  const res = await fetch(`${server.url}/robot/jog`, {
    method: 'POST',
    headers: JSON_TYPE,
    body: JSON.stringify({ joints: [0, 0, 0, 0, 0, 0, sign], ttl_ms: 20 }),
  });
  await res.arrayBuffer();
  return (await moved) - t0;
}

async function socketFirstMotion(server: TestServer, ws: WebSocket, sign: number): Promise<number> {
  await idle(server);
  const moved = firstMotion(server);
  const t0 = performance.now();
  ws.send(JSON.stringify({ joints: [0, 0, 0, 0, 0, 0, sign], ttl_ms: 20 }));
  return (await moved) - t0;
}

/** Braking after the dead-man at full jog speed: distance and time, by the engine on the drive (stepped, exact). */
function brakingRows(server: TestServer): (string | number)[][] {
  const chain = server.services.safety?.chain;
  if (!chain) return [];
  const limits = server.context.limits;
  const dt = 0.002;
  const speeds = { jointSpeed: 0.25, tcpSpeedMS: 0.25, tcpAngularSpeedRadS: 0.5 };
  const run = (target: Parameters<JogEngine['take']>[0], measure: (q: Float64Array) => number, unit: string) => {
    const engine = new JogEngine(chain, limits, speeds);
    const state = createSample(7);
    state.q.set(WORK);
    const out = createSample(7);
    const clip = createClipInfo();
    const ttl = 0.5;
    engine.take(target, ttl, state.q);
    let now = 0;
    let atLapse = 0;
    let lapsedAt = 0;
    for (let k = 0; k < 5000; k++) {
      now += dt;
      const report = engine.step(state, now, dt, 1, out);
      if (now > ttl && lapsedAt === 0) {
        lapsedAt = now - dt;
        atLapse = measure(state.q);
      }
      driveStep(state, out, limits, dt, clip);
      if (report.ended) break;
    }
    const distance = Math.abs(measure(state.q) - atLapse);
    return [unit, distance, (now - lapsedAt) * 1000];
  };
  const rows: (string | number)[][] = [];
  for (let j = 0; j < 7; j++) {
    const fractions = [0, 0, 0, 0, 0, 0, 0];
    fractions[j] = 1;
    const [unit, distance, ms] = run({ kind: 'joints', fractions }, (q) => q[j] ?? 0, 'rad');
    rows.push([
      `joint${j + 1} at ${(0.25 * (limits.maxVelRadS[j] ?? 0)).toFixed(3)} rad/s`,
      `${Number(distance).toFixed(4)} ${unit}`,
      Number(ms),
    ]);
  }
  const ws = createFkWorkspace(chain);
  const x = (q: Float64Array) => {
    forwardKinematics(chain, q, ws);
    return ws.tipPos[0] ?? 0;
  };
  const [, distance, ms] = run({ kind: 'cartesian', linear: [1, 0, 0], angular: [0, 0, 0], frame: 'base' }, x, 'm');
  rows.push(['TCP along x at 0.25 m/s', `${(Number(distance) * 1000).toFixed(2)} mm`, Number(ms)]);
  return rows;
}

export const jogSection: Section = {
  id: 'jog',
  description:
    'jog command to first motion (REST and WebSocket, p50/p99), braking after the dead-man at full jog speed, POST /stop p99 during a jog',
  async run() {
    const server = await startTestServer({ sim: { time_scale: 1 } });
    const client = await stopClient();
    const rest: number[] = [];
    const socket: number[] = [];
    const stops: number[] = [];
    try {
      for (let k = 0; k < 5; k++) await restFirstMotion(server, k % 2 ? 1 : -1);
      for (let k = 0; k < SAMPLES; k++) rest.push(await restFirstMotion(server, k % 2 ? 1 : -1));
      const ws = new WebSocket(`${server.url.replace('http', 'ws')}/robot/jog`, ['armgate.jog.v1']);
      await new Promise((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
      });
      try {
        for (let k = 0; k < SAMPLES; k++) socket.push(await socketFirstMotion(server, ws, k % 2 ? 1 : -1));
      } finally {
        ws.close();
      }
      // POST /stop while a jog is being commanded (every 50 ms from this process), timed from a child. One stop first,
      // unmeasured, as the other stop rows do: the client's first request in its fresh process costs it tens of ms.
      await client.stop(server.url);
      for (let k = 0; k < SAMPLES; k++) {
        await idle(server);
        let sending = true;
        const commands = (async () => {
          while (sending) {
            await fetch(`${server.url}/robot/jog`, {
              method: 'POST',
              headers: JSON_TYPE,
              body: JSON.stringify({ joints: [0, 0, 0, 0, 0, 0, k % 2 ? 1 : -1] }),
            }).then((r) => r.arrayBuffer());
            await sleep(50);
          }
        })();
        await sleep(150);
        stops.push(await client.stop(server.url));
        sending = false;
        await commands;
        server.logs.length = 0;
      }
    } finally {
      client.close();
      await server.close();
    }
    const row = (label: string, values: number[], target: number) => {
      const s = summary(values);
      return [label, String(values.length), s.p50, s.p99, `p99 < ${target} ms: ${verdict(s.p99 < target)}`];
    };
    const latency: Table = {
      title: 'Jogging: command to first motion, and POST /stop during a jog (simulator, time_scale 1)',
      header: ['what', 'samples', 'p50 ms', 'p99 ms', 'target'],
      rows: [
        row('POST /robot/jog to first motion', rest, TARGET_FIRST_MOTION_P99_MS),
        row('WebSocket message to first motion', socket, TARGET_FIRST_MOTION_P99_MS),
        row('POST /stop during a jog (child client)', stops, TARGET_STOP_P99_MS),
      ],
      notes: [
        'first motion: the controller period in which a joint first moves (the jog event), from the send in this process',
        '/stop: a jog commanded every 50 ms from this process, the stop sent and timed from a child process',
      ],
    };
    const braking: Table = {
      title: 'Jogging: braking after the dead-man fires at full jog speed (engine on the drive, stepped at 500 Hz)',
      header: ['jog', 'distance after the lapse', 'time to rest ms'],
      rows: brakingRows(server),
      notes: ['joints brake at 0.9 of their acceleration limit; a Cartesian jog at 0.8 of it (its line kept)'],
    };
    return [latency, braking];
  },
};
