/**
 * The one place events come from: the mechanism points (motions starting and ending, the stop,
 * the sequence supervisor, the log rings, the joint-state stream) publish here, and every
 * subscriber (an SSE client of GET /events) gets the same bytes. Each event is serialized once,
 * whatever the number of subscribers; a subscriber's own work per event is a rate check and a
 * write into its bounded buffer (see lib/http/sse.ts), so a slow consumer never slows the rest.
 */

import { type Clock, systemClock, type Timer } from '../clock.ts';

/** The event types of GET /events. */
export type EventType =
  | 'joint_state'
  | 'motion'
  | 'sequence'
  | 'trajectory_log'
  | 'sequence_log'
  | 'stop'
  | 'pause'
  | 'resume'
  | 'override'
  | 'positions'
  | 'jog';

/** How a motion ended, that it started, or that it was paused and resumed on the way. */
export type MotionState = 'started' | 'paused' | 'resumed' | 'finished' | 'failed' | 'stopped' | 'preempted';

/** The motion state of a controller's trajectory outcome (refused and timeout are failures). */
export function motionStateOfOutcome(
  outcome: 'finished' | 'refused' | 'stopped' | 'preempted' | 'timeout',
): MotionState {
  if (outcome === 'refused' || outcome === 'timeout') return 'failed';
  return outcome;
}

/** The `motion` event's data. */
export interface MotionEvent {
  /** The motion's id, counted from 1 per server; its start and its end carry the same id. */
  readonly id: number;
  /** What moves the arm: `move` (the three moves and their tools) or `trajectory` (a trajectory sent with wait, or published). */
  readonly kind: 'move' | 'trajectory';
  readonly state: MotionState;
  readonly message: string;
}

/** Where a subscriber's frames go. */
export interface EventSink {
  /**
   * One frame: the bytes of one SSE event or comment, shared with every other subscriber (do not modify). `latest`:
   * a joint state, which replaces one of its kind still waiting for the client (the newest state, not a queue).
   */
  send(frame: Uint8Array, latest?: boolean): void;
  /** The bus closed (the server is shutting down): end the stream. */
  end(): void;
}

/** Options of a subscription. */
export interface SubscribeOptions {
  /** joint_state events per second this subscriber wants (never more than the controller publishes). */
  readonly jointStateHz: number;
}

interface Subscription {
  readonly sink: EventSink;
  readonly periodMs: number;
  nextDueMs: number;
}

/** Options of the bus: the heartbeat period and the clocks (tests inject them). */
export interface EventBusOptions {
  /** A comment line to every subscriber this often (ms of `clock`); 0 turns it off. Default 15 s. */
  readonly heartbeatMs?: number;
  /** The clock the heartbeat runs on (the app's: lib/app/compose.ts); default the process clock. */
  readonly clock?: Clock;
  /** Monotonic milliseconds, for the joint-state rates (those of their publisher); default `clock`'s. */
  readonly now?: () => number;
}

/** The heartbeat comment: keeps proxies and idle-connection timers from closing a quiet stream. */
const HEARTBEAT = Buffer.from(': heartbeat\n\n');

/** Rounds to micro-units: joint values in 7 significant decimals cost fewer bytes per frame than 17. */
function micro(values: ArrayLike<number>): number[] {
  const out = new Array<number>(values.length);
  for (let i = 0; i < values.length; i++) out[i] = Math.round((values[i] ?? 0) * 1e6) / 1e6;
  return out;
}

/** The SSE frame of one event: `id`, `event` and one `data` line of JSON (JSON has no raw line breaks). */
function frameOf(id: number, type: EventType, data: unknown): Uint8Array {
  return Buffer.from(`id: ${id}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** The event bus: publish from the mechanism points, subscribe per SSE client. */
export class EventBus {
  private lastId = 0;
  private lastMotionId = 0;
  /** The motion started and not yet ended (its pause and resume carry its id). */
  private current: { readonly id: number; readonly kind: MotionEvent['kind'] } | undefined;
  private lastJointStateMs = Number.NEGATIVE_INFINITY;
  private readonly subs = new Set<Subscription>();
  private readonly observers = new Set<(type: Exclude<EventType, 'joint_state'>, data: unknown) => void>();
  private readonly now: () => number;
  private readonly heartbeat: Timer | undefined;
  private closed = false;
  /** Holds of the fan-out in force (see {@link hold}), and what is told when the last one ends. */
  private holds = 0;
  private readonly released = new Set<() => void>();
  /** Events published (serialized) and frames written into subscribers' buffers, since start. */
  readonly counts = { published: 0, delivered: 0 };

  constructor(options: EventBusOptions = {}) {
    const clock = options.clock ?? systemClock;
    this.now = options.now ?? (() => clock.nowMs());
    const every = options.heartbeatMs ?? 15_000;
    if (every > 0) {
      this.heartbeat = clock.every(every, () => this.broadcast(HEARTBEAT));
      this.heartbeat.unref?.();
    }
  }

  /** Number of subscribers. */
  get size(): number {
    return this.subs.size;
  }

  /** A new motion id (the `id` of motion events). */
  nextMotionId(): number {
    return ++this.lastMotionId;
  }

  /**
   * Holds the writing of frames to the clients (the stop being answered, lib/server/start.ts): frames published
   * meanwhile wait, and are written once the last hold ends, at most `maxMs` later. Returns the release (idempotent).
   */
  hold(maxMs = 200): () => void {
    this.holds++;
    let done = false;
    const release = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (--this.holds === 0) for (const listener of this.released) listener();
    };
    const timer = setTimeout(release, maxMs);
    timer.unref();
    return release;
  }

  /** True while a hold is in force: frames published wait. */
  get held(): boolean {
    return this.holds > 0;
  }

  /** Calls `listener` each time the last hold ends; returns the removal. */
  onRelease(listener: () => void): () => void {
    this.released.add(listener);
    return () => this.released.delete(listener);
  }

  /** Adds a subscriber; returns the unsubscribe (idempotent). After {@link close}, the sink is ended at once. */
  subscribe(sink: EventSink, options: SubscribeOptions): () => void {
    if (this.closed) {
      sink.end();
      return () => undefined;
    }
    const sub: Subscription = { sink, periodMs: 1000 / options.jointStateHz, nextDueMs: 0 };
    this.subs.add(sub);
    return () => {
      this.subs.delete(sub);
    };
  }

  /**
   * A `motion` event of the motion in progress (the last started and not yet ended) with `state`
   * (paused, resumed); nothing when no motion event is open (a sequence's goals have their own).
   */
  publishMotionState(state: MotionState, message: string): void {
    const current = this.current;
    if (current) this.publish('motion', { id: current.id, kind: current.kind, state, message });
  }

  /**
   * Adds an observer of every event but the joint states, as data (not frames): another face that carries the events
   * (the Foxglove server, lib/foxglove). Returns the removal. An observer must not throw and does its own buffering.
   */
  observe(observer: (type: Exclude<EventType, 'joint_state'>, data: unknown) => void): () => void {
    this.observers.add(observer);
    return () => {
      this.observers.delete(observer);
    };
  }

  /** Publishes an event to every subscriber (serialized once); returns its id, or 0 when nobody listens. */
  publish(type: Exclude<EventType, 'joint_state'>, data: unknown): number {
    if (type === 'motion') this.track(data as MotionEvent);
    for (const observer of this.observers) observer(type, data);
    if (this.subs.size === 0) return 0;
    const id = ++this.lastId;
    this.broadcast(frameOf(id, type, data));
    this.counts.published++;
    return id;
  }

  /**
   * Offers a joint state (J1..J7 order; `stampS` the message's stamp in seconds). Each subscriber
   * takes it when its rate is due (early by at most half the publisher's period, so 50 Hz from a
   * 100 Hz publisher is every second message); the frame is built once, only when someone takes it.
   */
  publishJointState(
    stampS: number,
    position: ArrayLike<number>,
    velocity: ArrayLike<number>,
    effort: ArrayLike<number>,
  ): void {
    if (this.subs.size === 0) return;
    const now = this.now();
    // Early by up to half the publisher's period (its jitter), at most a quarter of the subscriber's.
    const slackMs = (now - this.lastJointStateMs) / 2;
    this.lastJointStateMs = now;
    let frame: Uint8Array | undefined;
    // Deleting from a Set while iterating it is safe: a sink may unsubscribe itself (a dropped slow consumer).
    for (const sub of this.subs) {
      if (now < sub.nextDueMs - Math.min(sub.periodMs / 4, slackMs)) continue;
      // On schedule: the next is one period later (taking one early keeps the average rate); behind by more
      // than a period (the first event, a pause of the publisher): one period from now.
      sub.nextDueMs = now - sub.nextDueMs > sub.periodMs ? now + sub.periodMs : sub.nextDueMs + sub.periodMs;
      if (!frame) {
        frame = frameOf(++this.lastId, 'joint_state', {
          stamp: stampS,
          position: micro(position),
          velocity: micro(velocity),
          effort: micro(effort),
        });
        this.counts.published++;
      }
      this.counts.delivered++;
      sub.sink.send(frame, true);
    }
  }

  /** Ends every subscriber's stream and refuses new ones (shutdown). */
  close(): void {
    this.closed = true;
    this.observers.clear();
    this.heartbeat?.cancel();
    const subs = [...this.subs];
    this.subs.clear();
    for (const sub of subs) sub.sink.end();
  }

  private track(event: MotionEvent): void {
    if (event.state === 'started') this.current = { id: event.id, kind: event.kind };
    else if (event.state !== 'paused' && event.state !== 'resumed' && this.current?.id === event.id)
      this.current = undefined;
  }

  private broadcast(frame: Uint8Array): void {
    for (const sub of this.subs) {
      this.counts.delivered++;
      sub.sink.send(frame);
    }
  }
}
