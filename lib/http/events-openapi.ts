import { EVENTS_PATH, RATE_HZ } from './sse.ts';

/** The OpenAPI path item of GET /events (the stream is not an operation: it has no JSON answer). */
export const EVENTS_OPENAPI = {
  [EVENTS_PATH]: {
    get: {
      operationId: 'getEvents',
      summary: 'Event stream (Server-Sent Events)',
      description:
        'A text/event-stream of what the service does, each event as `id` (increasing), `event` (its type) and one ' +
        '`data` line of JSON:\n\n' +
        '- `joint_state` {stamp (s), position[7], velocity[7], effort[7]} (J1..J7) at rate_hz, never faster than the ' +
        'controller publishes;\n' +
        '- `motion` {id, kind: move | trajectory, state: started | finished | failed | stopped | preempted, message}: ' +
        'a start and an end with the same id;\n' +
        '- `sequence` {status, iteration, point, returncode} whenever the sequence status changes (the fields of ' +
        'GET /sequences/status);\n' +
        '- `trajectory_log` and `sequence_log` {line}: each new line of GET /trajectory/logs and GET /sequences/logs;\n' +
        '- `stop` {reason, message, sequence_stopped, hold_published, planner_stopped, revoked}: after POST /stop;\n' +
        '- `positions` {change: saved | deleted, name, joints, by, count}: a taught position was saved or deleted.\n\n' +
        'A comment line (`: heartbeat`) comes every 15 s. A client that reads slower than events come gets the ' +
        'newest joint state when it catches up, not every one it missed; beyond 64 KiB of other events waiting it is ' +
        'dropped (its stream ends); reconnect. A client that takes no byte for web.limits.event_stall_s (30 s) while ' +
        'bytes wait for it (it does not read; its socket is full) is dropped too, and its place of ' +
        'web.limits.max_event_clients is free at once; beyond that cap, a new stream ends the one stalled longest ' +
        '(5 s at least) to make room, else it is answered 503. No replay: Last-Event-ID is ignored. Browsers: ' +
        'EventSource cannot send the Authorization header; read the stream with fetch().',
      tags: ['events'],
      security: [{ bearerAuth: [] }],
      parameters: [
        {
          name: 'rate_hz',
          in: 'query',
          required: false,
          description: 'joint_state events per second.',
          schema: { type: 'number', minimum: RATE_HZ.min, maximum: RATE_HZ.max, default: RATE_HZ.default },
        },
      ],
      responses: {
        200: {
          description: 'The event stream; it stays open.',
          content: { 'text/event-stream': { schema: { type: 'string' } } },
        },
        401: { description: 'Missing or wrong Bearer token.' },
        403: { description: 'The Host is not one this server serves.' },
        422: { description: 'Invalid rate_hz: the field path is in loc.' },
      },
    },
  },
} as const;
