import { Readable } from 'node:stream';
import { Response } from '@whatwg-node/fetch';
import { type ApiError, invalid } from '../core/errors.ts';
import { errorResponse } from '../http/errors.ts';
import { err, ok, type Result } from '../result.ts';
import type { EventBus } from './bus.ts';

/** The path of the event stream. */
export const EVENTS_PATH = '/events';
/** joint_state rate bounds and default (events per second). */
export const RATE_HZ = { min: 1, max: 200, default: 50 } as const;
/**
 * Bytes a client may have waiting in its buffer before it is dropped (about 2.5 s of joint states
 * at 50 Hz, beyond what the socket itself holds). A dropped client's stream ends; it reconnects.
 */
export const MAX_BUFFERED_BYTES = 64 * 1024;

const HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
} as const;

/** The first bytes of every stream: the reconnection delay a browser's EventSource uses, and a comment. */
const OPENING = Buffer.from('retry: 2000\n: armgate events\n\n');

/** rate_hz from the query: the only parameter, at most once, a number within {@link RATE_HZ}. */
export function parseRate(url: string): Result<number, ApiError> {
  const start = url.indexOf('?');
  if (start < 0) return ok(RATE_HZ.default);
  let rate: number = RATE_HZ.default;
  let seen = false;
  for (const [key, value] of new URLSearchParams(url.slice(start + 1))) {
    if (key !== 'rate_hz')
      return err(
        invalid(['query', key], `unknown query parameter '${key.slice(0, 64)}'; known: rate_hz`, 'extra_forbidden'),
      );
    if (seen) return err(invalid(['query', key], `parameter '${key}' given more than once`));
    seen = true;
    const text = value.trim();
    const n = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d{1,3})?$/.test(text) ? Number(text) : Number.NaN;
    if (!Number.isFinite(n)) return err(invalid(['query', 'rate_hz'], 'Invalid type: Expected number', 'type'));
    if (n < RATE_HZ.min || n > RATE_HZ.max)
      return err(
        invalid(['query', 'rate_hz'], `rate_hz must be within ${RATE_HZ.min}..${RATE_HZ.max} (events per second)`),
      );
    rate = n;
  }
  return ok(rate);
}

/**
 * Frames go to the streams once per turn of the event loop (one setImmediate for every stream), not from inside the
 * publisher's call. A Readable's push schedules its flow with process.nextTick, and Node runs every queued nextTick
 * before the promise continuations the same callback queued: a stop whose hold point published an event to 1,000
 * streams waited for their ~1,000 socket writes (7-9 ms) between its first step and the rest of it, its answer
 * included (issue 23). Queued here, the writes come after the work that published them.
 */
class TurnDelivery {
  private readonly waiting = new Map<Readable, { frames: Uint8Array[]; bytes: number }>();
  private scheduled = false;

  /** Queues `frame` for `stream`; returns the bytes now queued for it (a burst past the client's buffer is pushed at once). */
  queue(stream: Readable, frame: Uint8Array): number {
    let entry = this.waiting.get(stream);
    if (entry) {
      entry.frames.push(frame);
      entry.bytes += frame.byteLength;
    } else {
      entry = { frames: [frame], bytes: frame.byteLength };
      this.waiting.set(stream, entry);
    }
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
    return entry.bytes;
  }

  /** Pushes what is queued for `stream` now (its end follows), or drops it. */
  settle(stream: Readable, push: boolean): void {
    const entry = this.waiting.get(stream);
    this.waiting.delete(stream);
    if (push && entry && !stream.destroyed) for (const frame of entry.frames) stream.push(frame);
  }

  private readonly flush = () => {
    this.scheduled = false;
    const waiting = [...this.waiting];
    this.waiting.clear();
    for (const [stream, { frames }] of waiting) if (!stream.destroyed) for (const frame of frames) stream.push(frame);
  };
}

/**
 * GET /events: a Server-Sent Events stream from the bus. Each client has a buffer of at most
 * {@link MAX_BUFFERED_BYTES}: a client that reads slower than events come is dropped (its stream
 * ends), so it never holds the bus or the service. The stream ends when the client goes away
 * (the request's signal) or the bus closes (shutdown). Authentication is the app's, as for every route.
 */
export function eventsHandler(bus: EventBus): (request: Request) => Promise<Response> {
  const delivery = new TurnDelivery();
  return async (request) => {
    if (request.method !== 'GET')
      return errorResponse({
        kind: 'method_not_allowed',
        detail: `Method ${request.method} not allowed on ${EVENTS_PATH}; use GET`,
        allow: ['GET'],
      });
    const rate = parseRate(request.url);
    if (!rate.ok) return errorResponse(rate.error);
    // read() does nothing: frames are pushed as they come; readableLength is what the client has not taken yet.
    const stream = new Readable({ read() {} });
    stream.push(OPENING);
    let unsubscribe = (): void => undefined;
    /** Ends the stream: after what is queued for it (the bus closed), or without it (a client too slow). */
    const finish = (deliverQueued: boolean) => {
      unsubscribe();
      delivery.settle(stream, deliverQueued);
      if (!stream.readableEnded && !stream.destroyed) stream.push(null);
    };
    unsubscribe = bus.subscribe(
      {
        send(frame) {
          if (stream.readableLength > MAX_BUFFERED_BYTES) finish(false);
          else if (delivery.queue(stream, frame) > MAX_BUFFERED_BYTES) delivery.settle(stream, true);
        },
        end: () => finish(true),
      },
      { jointStateHz: rate.value },
    );
    request.signal.addEventListener(
      'abort',
      () => {
        unsubscribe();
        delivery.settle(stream, false);
        stream.destroy();
      },
      { once: true },
    );
    return new Response(stream as unknown as ReadableStream<Uint8Array>, { status: 200, headers: HEADERS });
  };
}

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
        'A comment line (`: heartbeat`) comes every 15 s. A client that reads slower than events come is dropped ' +
        '(its stream ends after a buffer of 64 KiB); reconnect. No replay: Last-Event-ID is ignored. Browsers: ' +
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
