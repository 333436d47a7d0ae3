import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import { Response } from '@whatwg-node/fetch';
import { type ApiError, invalid } from '../core/errors.ts';
import { type Clock, systemClock } from '../clock.ts';
import { withDirectBody } from './direct-body.ts';
import { errorResponse } from './errors.ts';
import { err, ok, type Result } from '../result.ts';
import type { EventBus } from '../events/bus.ts';
import { StallWatch } from './stall-watch.ts';

/** The path of the event stream. */
export const EVENTS_PATH = '/events';
/** joint_state rate bounds and default (events per second). */
export const RATE_HZ = { min: 1, max: 200, default: 50 } as const;
/**
 * Bytes a client may have waiting in its buffer before it is dropped (about 2.5 s of joint states
 * at 50 Hz, beyond what the socket itself holds). A dropped client's stream ends; it reconnects.
 */
export const MAX_BUFFERED_BYTES = 64 * 1024;
/** How long (ms) a stream may take nothing while bytes wait for it, when web.limits.event_stall_s is not given. */
export const DEFAULT_STALL_MS = 30_000;

const HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
} as const;

const EMPTY = Buffer.alloc(0);

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

/** A log line's sink (the server's). */
type Log = (fields: Record<string, string | number>) => void;

/** What the event stream's handler is given besides its bus. */
export interface EventsOptions {
  /** The clock the stall watch runs on (the app's; lib/clock.ts). Default the process clock. */
  readonly clock?: Clock | undefined;
  /** web.limits.event_stall_s in ms: how long a stream may take nothing while bytes wait for it. */
  readonly stallMs?: number;
  /** Where the line of streams ended for their clients' slowness goes. */
  readonly log?: Log;
}

/** Least time (ms; event_stall_s if shorter) a stream took no byte while bytes waited, to be ended to make room. */
export const ROOM_MIN_STALL_MS = 5000;

/** Ends the stream stalled longest (of those on a socket `accept`ed) to make room at web.limits.`cap`: its response. */
export type MakeEventRoom = (cap: string, accept?: (response: ServerResponse) => boolean) => ServerResponse | undefined;
/** GET /events's handler, and its {@link MakeEventRoom} (the listener's caps). */
export type EventsHandler = ((request: Request) => Promise<Response>) & { makeRoom: MakeEventRoom };

/** Streams written per turn of the event loop: between batches the loop polls, so a stop read meanwhile runs first. */
export const STREAMS_PER_TURN = 64;

/** Where one stream's bytes go: a Readable (the Response's body) or, served by armgate's listener, the socket. */
interface Out {
  /** Bytes handed over that the client has not taken yet (beyond what the kernel holds for it). */
  backlog(): number;
  /** Bytes the client has taken since the way out opened (grows as it reads). */
  taken(): number;
  write(frame: Uint8Array): void;
  /** Ends the stream after what was written. */
  end(): void;
  /**
   * Ends the stream of a client too slow, with what waits for it and a last comment saying `why` if that can be given
   * without waiting.
   */
  drop(waiting: readonly Uint8Array[], why: string): void;
}

/** The last comment of a stream ended for its client's slowness. */
const endedFrame = (why: string) => Buffer.from(`: ended: reads too slowly (${why})\n\n`);

/** The chunk of HTTP/1.1's chunked coding of each frame, made once whatever the number of streams. */
const chunks = new WeakMap<Uint8Array, Buffer>();
function chunkOf(frame: Uint8Array): Buffer {
  let chunk = chunks.get(frame);
  if (!chunk) {
    chunk = Buffer.concat([Buffer.from(`${frame.byteLength.toString(16)}\r\n`), frame, Buffer.from('\r\n')]);
    chunks.set(frame, chunk);
  }
  return chunk;
}

/**
 * One client's stream. Frames wait in its queue until its client has taken what it was given (the socket's buffer is
 * drained): then the fan-out writes them all. A joint state replaces the one still waiting (the client gets the
 * newest state when it catches up, not a backlog of old ones); other events wait in order, within
 * {@link MAX_BUFFERED_BYTES} with what the client has not taken, beyond which the client is dropped.
 */
class EventStream {
  private queue: Uint8Array[] = [];
  private queuedBytes = 0;
  /** The index in the queue of the joint state waiting, or -1. */
  private latestAt = -1;
  out: Out;
  done = false;

  constructor(out: Out) {
    this.out = out;
  }

  /** Bytes its client has taken (lib/http/stall-watch.ts). */
  taken(): number {
    return this.out.taken();
  }

  /** Bytes handed over that its client has not taken. */
  owed(): number {
    return this.out.backlog();
  }

  get waiting(): boolean {
    return this.queue.length > 0;
  }

  /** Queues a frame; false when the client is too slow (its stream is to be dropped). */
  offer(frame: Uint8Array, latest: boolean): boolean {
    if (latest && this.latestAt >= 0) {
      this.queuedBytes -= (this.queue[this.latestAt] as Uint8Array).byteLength;
      this.queue.splice(this.latestAt, 1);
    }
    if (this.out.backlog() + this.queuedBytes + frame.byteLength > MAX_BUFFERED_BYTES) {
      // A burst past the bound within one turn, to a client that has taken all it was given: written at once.
      this.deliver();
      if (this.out.backlog() + this.queuedBytes + frame.byteLength > MAX_BUFFERED_BYTES) return false;
    }
    if (latest) this.latestAt = this.queue.length;
    this.queue.push(frame);
    this.queuedBytes += frame.byteLength;
    return true;
  }

  /** Writes what waits, if the client has taken what it had (or `always`). */
  deliver(always = false): void {
    if (this.done || this.queue.length === 0 || (!always && this.out.backlog() > 0)) return;
    const queue = this.queue;
    this.queue = [];
    this.queuedBytes = 0;
    this.latestAt = -1;
    for (const frame of queue) this.out.write(frame);
  }

  /** Ends the stream: after what waits (the bus closed), or dropping the client (too slow: `why`). */
  finish(deliverWaiting: boolean, why = ''): void {
    if (this.done) return;
    const waiting = this.queue;
    this.queue = [];
    this.done = true;
    if (deliverWaiting) {
      for (const frame of waiting) this.out.write(frame);
      this.out.end();
    } else this.out.drop(waiting, why);
  }
}

/**
 * Writes the streams' frames a batch of {@link STREAMS_PER_TURN} streams per turn of the event loop, after the work
 * that published them, and not while the bus is held (a stop being answered). A Readable's push schedules its flow
 * with process.nextTick, which Node runs before the promise continuations the same callback queued: written from
 * inside the publisher's call, a stop whose hold point published an event to 1,000 streams waited for their socket
 * writes between its first step and its answer (issue 23). Written a batch per turn, the loop polls between batches,
 * so a stop that arrives while 1,000 streams are written waits for one batch, not for all (issue 37).
 */
class FanOut {
  private readonly dirty = new Set<EventStream>();
  /** Streams of clients too slow, to be ended (why), in the same batches: a stop never waits for their sockets. */
  private readonly ending = new Map<EventStream, string>();
  private scheduled = false;
  private readonly bus: EventBus;
  private readonly log: Log;
  /** Streams ended for their clients' slowness since start (the log line's count). */
  private ended = 0;

  constructor(bus: EventBus, log: Log) {
    this.bus = bus;
    this.log = log;
    bus.onRelease(() => this.schedule());
  }

  /** `stream` has frames to write. */
  mark(stream: EventStream): void {
    this.dirty.add(stream);
    this.schedule();
  }

  /** `stream`'s client is too slow (`why`): its stream is ended (its socket closed) on a coming turn. */
  end(stream: EventStream, why: string): void {
    this.dirty.delete(stream);
    this.ending.set(stream, why);
    this.schedule();
  }

  forget(stream: EventStream): void {
    this.dirty.delete(stream);
    this.ending.delete(stream);
  }

  private schedule(): void {
    if (this.scheduled || (this.dirty.size === 0 && this.ending.size === 0) || this.bus.held) return;
    this.scheduled = true;
    setImmediate(this.flush);
  }

  private readonly flush = () => {
    this.scheduled = false;
    if (this.bus.held) return;
    let done = 0;
    if (this.ending.size > 0) {
      const byWhy = new Map<string, number>();
      for (const [stream, why] of this.ending) {
        if (done === STREAMS_PER_TURN) break;
        done++;
        this.ending.delete(stream);
        stream.finish(false, why);
        byWhy.set(why, (byWhy.get(why) ?? 0) + 1);
      }
      for (const [why, streams] of byWhy) {
        this.ended += streams;
        this.log({
          level: 'warn',
          msg: 'event streams ended',
          reason: 'reads too slowly',
          why,
          streams,
          total: this.ended,
        });
      }
    }
    for (const stream of this.dirty) {
      if (done++ >= STREAMS_PER_TURN) break;
      this.dirty.delete(stream);
      stream.deliver();
    }
    this.schedule();
  };
}

/** The stream's way out through its Response's Readable body (the app in memory, the fetch adapter). */
class ReadableOut implements Out {
  readonly readable: Readable;
  private pushed = 0;

  constructor(waiting: () => boolean, mark: () => void) {
    // read() asks for more (once per push: it asks again only after one): once the reader has taken all it has, what
    // waits is written on the next batch; else an empty push lets the stream ask again when the reader has.
    this.readable = new Readable({
      read: () => {
        if (this.readable.readableLength === 0 && waiting()) mark();
        else this.readable.push(EMPTY);
      },
    });
    this.write(OPENING);
  }

  backlog(): number {
    return this.readable.readableLength;
  }

  taken(): number {
    return this.pushed - this.readable.readableLength;
  }

  write(frame: Uint8Array): void {
    if (this.readable.destroyed) return;
    this.pushed += frame.byteLength;
    this.readable.push(frame);
  }

  end(): void {
    if (!this.readable.readableEnded && !this.readable.destroyed) this.readable.push(null);
  }

  drop(waiting: readonly Uint8Array[], why: string): void {
    // In memory, within the bound: given, then why, then the end.
    for (const frame of waiting) this.write(frame);
    this.write(endedFrame(why));
    this.end();
  }
}

/**
 * The stream's way out on the socket of Node's response, once its head is written (lib/http/direct-body.ts): each
 * frame in one write of bytes made once for every stream (its chunk of the chunked coding), none of the Readable, pipe
 * and chunked writer's steps per stream. A client too slow is cut: nothing more would reach it.
 */
class SocketOut implements Out {
  private readonly res: ServerResponse;
  private readonly socket: Socket;
  private readonly chunked: boolean;

  constructor(res: ServerResponse, onDrain: () => void) {
    this.res = res;
    this.socket = res.socket as Socket;
    res.flushHeaders();
    this.chunked = (res as ServerResponse & { chunkedEncoding?: boolean }).chunkedEncoding === true;
    this.socket.on('drain', onDrain);
    res.once('close', () => this.socket.off('drain', onDrain));
    this.write(OPENING);
  }

  backlog(): number {
    return this.socket.writableLength;
  }

  taken(): number {
    // Bytes handed to the socket, less those it has not written yet: what the kernel took (Node counts both).
    return (this.socket.bytesWritten ?? 0) - this.socket.writableLength;
  }

  write(frame: Uint8Array): void {
    if (!this.socket.destroyed) this.socket.write(this.chunked ? chunkOf(frame) : frame);
  }

  end(): void {
    this.res.end();
  }

  drop(_waiting: readonly Uint8Array[], why: string): void {
    // Why, when the socket can take it now (nothing of the stream waits in it); the client gets the socket's end.
    if (this.socket.writableLength === 0) this.write(endedFrame(why));
    this.socket.destroy();
  }
}

/**
 * GET /events: a Server-Sent Events stream from the bus. Each client may leave at most {@link MAX_BUFFERED_BYTES}
 * untaken: beyond it (it reads slower than events come) it is dropped (its stream ends), so it never holds the bus or
 * the service; joint states waiting for it are coalesced to the newest. A client that takes no byte for `stallMs`
 * while bytes wait for it (it does not read: its socket's buffers are full) is dropped too, so that it gives its place
 * (web.limits.max_event_clients) back; at that cap, the one stalled longest (for {@link ROOM_MIN_STALL_MS} at least)
 * is ended to make room for a new stream (makeRoom: the listener asks). All are ended a batch per turn and counted in
 * a log line. The stream ends when the client goes away or the bus closes (shutdown). Authentication is the app's.
 */
export function eventsHandler(bus: EventBus, options: EventsOptions = {}): EventsHandler {
  const log = options.log ?? (() => undefined);
  const stallMs = options.stallMs ?? DEFAULT_STALL_MS;
  const fanOut = new FanOut(bus, log);
  const stalledWhy = `took nothing for ${stallMs / 1000} s: web.limits.event_stall_s`;
  const overWhy = `over ${MAX_BUFFERED_BYTES} bytes waiting`;
  const drops = new WeakMap<EventStream, (why: string) => void>();
  const watch = new StallWatch<EventStream>(options.clock ?? systemClock, stallMs, (stalled) => {
    for (const stream of stalled) drops.get(stream)?.(stalledWhy);
  });
  /** The responses of the streams served on a socket: only those the listener counts, only those it sheds. */
  const responses = new WeakMap<EventStream, ServerResponse>();
  const roomMs = Math.min(ROOM_MIN_STALL_MS, stallMs);
  const makeRoom: MakeEventRoom = (cap, accept = () => true) => {
    const stream = watch.longestStalled(roomMs, (s) => responses.has(s) && accept(responses.get(s) as ServerResponse));
    const why = `took nothing for ${roomMs / 1000} s or more; its place was wanted: web.limits.${cap}`;
    if (stream) drops.get(stream)?.(why);
    return stream && responses.get(stream);
  };
  const handler = async (request: Request): Promise<Response> => {
    if (request.method !== 'GET')
      return errorResponse({
        kind: 'method_not_allowed',
        detail: `Method ${request.method} not allowed on ${EVENTS_PATH}; use GET`,
        allow: ['GET'],
      });
    const rate = parseRate(request.url);
    if (!rate.ok) return errorResponse(rate.error);
    const readableOut = new ReadableOut(
      () => stream.waiting,
      () => fanOut.mark(stream),
    );
    const stream = new EventStream(readableOut);
    let unsubscribe = (): void => undefined;
    const leave = () => {
      unsubscribe();
      watch.delete(stream);
      fanOut.forget(stream);
    };
    const finish = () => {
      leave();
      stream.finish(true);
    };
    // A client too slow takes no more frames from now on; its stream is ended on a coming turn.
    const drop = (why: string) => {
      leave();
      fanOut.end(stream, why);
    };
    drops.set(stream, drop);
    unsubscribe = bus.subscribe(
      {
        send(frame, latest = false) {
          if (stream.offer(frame, latest)) fanOut.mark(stream);
          else drop(overWhy);
        },
        end: finish,
      },
      { jointStateHz: rate.value },
    );
    if (!stream.done) watch.add(stream);
    request.signal.addEventListener(
      'abort',
      () => {
        leave();
        stream.done = true;
        readableOut.readable.destroy();
      },
      { once: true },
    );
    const response = new Response(readableOut.readable as unknown as ReadableStream<Uint8Array>, {
      status: 200,
      headers: HEADERS,
    });
    return withDirectBody(response, {
      writeTo(res) {
        readableOut.readable.destroy();
        responses.set(stream, res);
        stream.out = new SocketOut(res, () => {
          if (stream.waiting) fanOut.mark(stream);
        });
        if (stream.done) res.end();
        else if (stream.waiting) fanOut.mark(stream);
      },
    });
  };
  return Object.assign(handler, { makeRoom });
}
