/**
 * A live server for the /events stall tests (tests/events/): its simulator and stall watch on a clock the test steps,
 * joint states published at 1 kHz, an admin token and a read-only viewer's, and the web limits under test.
 */
import type { SteppedClock } from '../../lib/clock.ts';
import type { TestServer } from './server.ts';
import { openSse, type SseStream } from './sse.ts';
import { startSteppedServer } from './stepped.ts';

export interface EventsServer {
  readonly server: TestServer;
  readonly clock: SteppedClock;
  readonly port: number;
  /** The admin's token (POST /stop) and the viewer's (read role: every stream the tests open). */
  readonly token: string;
  readonly viewer: string;
  /** Opens GET /events?rate_hz=`rate` with the viewer's token. */
  open(rate: number): Promise<SseStream>;
  /** Steps the clock `ms` in steps of 5 ms. */
  step(ms: number): Promise<void>;
}

/** Starts the server; `name` makes its tokens its own, `limits` are web.limits. */
export async function startEventsServer(name: string, limits: Record<string, number>): Promise<EventsServer> {
  const token = `${name}-admin-token`;
  const viewer = `${name}-viewer-token`;
  const { server, clock } = await startSteppedServer({
    web: { token, tokens: [{ name: 'viewer', token: viewer, role: 'read' }], limits },
    sim: { joint_state_rate_hz: 1000 },
  });
  return {
    server,
    clock,
    port: Number(new URL(server.url).port),
    token,
    viewer,
    open: (rate) => openSse(server.url, `/events?rate_hz=${rate}`, { token: viewer }),
    step: async (ms) => {
      for (let t = 0; t < ms; t += 5) await clock.advance(5);
    },
  };
}
