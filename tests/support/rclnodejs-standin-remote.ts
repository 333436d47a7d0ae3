/**
 * A STAND-IN for the rclnodejs module in another process, for tests only: it is not rclnodejs.
 * A process started with the environment of tests/support/standin-graph.ts imports this file
 * when it imports `rclnodejs`. Every call is forwarded over the Unix socket in
 * ARMGATE_STANDIN_GRAPH to the test process, which performs it on the in-process stand-in
 * (tests/support/rclnodejs-standin.ts, backed by the simulator). What rclnodejs answers
 * synchronously (the graph's topics, whether an action server is there) comes from the snapshots
 * the test process sends every 100 ms, so a fresh node sees an empty graph for a moment, as on
 * ROS 2.
 *
 * Covered: init/shutdown, Node (spin, destroy, getTopicNamesAndTypes, subscriptions raw or not),
 * ActionClient (availability, goals with feedback, results with status, cancel). Not covered:
 * publishers and service clients (the runner uses neither: they throw here), errors of entity
 * creation (reported on stderr, not thrown, since the answer comes later), and everything the
 * in-process stand-in does not cover.
 */
import { connect } from 'node:net';
import type {
  RclActionClient,
  RclClient,
  RclEntity,
  RclGoalHandle,
  RclModule,
  RclNamesAndTypes,
  RclNode,
  RclOptions,
  RclPublisher,
} from '../../lib/ros/rclnodejs-api.ts';
import { decodeValue, encodeValue, onJsonLines } from './standin-graph.ts';

const socketPath = process.env.ARMGATE_STANDIN_GRAPH;
if (!socketPath)
  throw new Error('the remote rclnodejs stand-in needs ARMGATE_STANDIN_GRAPH (tests/support/standin-graph.ts)');

const socket = connect(socketPath);
await new Promise<void>((resolve, reject) => {
  socket.once('connect', resolve);
  socket.once('error', reject);
});

let nextId = 1;
const replies = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
const subscriptions = new Map<number, (message: unknown) => void>();
const goals = new Map<number, RemoteGoalHandle>();
let snapshot: { topics: RclNamesAndTypes[]; available: Record<string, boolean> } = { topics: [], available: {} };

function request(op: string, fields: Record<string, unknown> = {}): Promise<unknown> {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    replies.set(id, { resolve, reject });
    socket.write(`${JSON.stringify(encodeValue({ id, op, ...fields }))}\n`);
  });
}

/** A request whose answer nobody awaits (entity creation): a failure goes to stderr. */
function fireAndForget(op: string, fields: Record<string, unknown>): void {
  request(op, fields).catch((e: unknown) =>
    process.stderr.write(`rclnodejs stand-in: ${op} failed: ${(e as Error).message}\n`),
  );
}

onJsonLines(socket, (m) => {
  if (typeof m.re === 'number') {
    const waiter = replies.get(m.re);
    replies.delete(m.re);
    if (typeof m.error === 'string') waiter?.reject(new Error(m.error));
    else waiter?.resolve(decodeValue(m.value));
  } else if (m.event === 'graph') snapshot = m as unknown as typeof snapshot;
  else if (m.event === 'message') subscriptions.get(m.sub as number)?.(decodeValue(m.message));
  else if (m.event === 'feedback') goals.get(m.goal_id as number)?.feedback(m.feedback);
  else if (m.event === 'status') goals.get(m.goal_id as number)?.setStatus(m.status as number);
  else if (m.event === 'result') goals.get(m.goal_id as number)?.settle(m);
});

class RemoteGoalHandle implements RclGoalHandle {
  status = 0;
  accepted = false;
  private readonly id: number;
  private readonly onFeedback: ((feedback: unknown) => void) | undefined;
  private readonly result: Promise<unknown>;
  private resolveResult: (value: unknown) => void = () => undefined;
  private rejectResult: (error: Error) => void = () => undefined;

  constructor(id: number, onFeedback: ((feedback: unknown) => void) | undefined) {
    this.id = id;
    this.onFeedback = onFeedback;
    this.result = new Promise((resolve, reject) => {
      this.resolveResult = resolve;
      this.rejectResult = reject;
    });
  }
  feedback(feedback: unknown): void {
    this.onFeedback?.(feedback);
  }
  setStatus(status: number): void {
    this.status = status;
  }
  settle(m: Record<string, unknown>): void {
    this.status = m.status as number;
    if (typeof m.error === 'string') this.rejectResult(new Error(m.error));
    else this.resolveResult(decodeValue(m.result));
  }
  isAccepted(): boolean {
    return this.accepted;
  }
  getResult(): Promise<unknown> {
    return this.result;
  }
  cancelGoal(): Promise<unknown> {
    return request('goal.cancel', { goal_id: this.id });
  }
}

class RemoteNode implements RclNode {
  readonly id = nextId++;
  constructor(name: string) {
    fireAndForget('node.create', { node: this.id, name });
  }
  createPublisher(): RclPublisher {
    throw new Error('publishers are not available in the remote rclnodejs stand-in');
  }
  createSubscription(
    type: string,
    topic: string,
    options: RclOptions,
    callback: (message: unknown) => void,
  ): RclEntity {
    const sub = nextId++;
    subscriptions.set(sub, callback);
    fireAndForget('sub.create', { node: this.id, sub, type, topic, raw: options.isRaw === true });
    return { sub };
  }
  createClient(): RclClient {
    throw new Error('service clients are not available in the remote rclnodejs stand-in');
  }
  destroyPublisher(): void {}
  destroySubscription(subscription: RclEntity): void {
    const sub = (subscription as { sub: number }).sub;
    subscriptions.delete(sub);
    fireAndForget('sub.destroy', { sub });
  }
  destroyClient(): void {}
  getTopicNamesAndTypes(): readonly RclNamesAndTypes[] {
    return snapshot.topics;
  }
  countSubscribers(): number {
    return 0;
  }
  spin(): void {
    fireAndForget('node.spin', { node: this.id });
  }
  destroy(): void {
    fireAndForget('node.destroy', { node: this.id });
  }
}

class RemoteActionClient implements RclActionClient {
  readonly id = nextId++;
  constructor(node: RclNode, type: string, name: string) {
    fireAndForget('action.create', { node: (node as RemoteNode).id, client: this.id, type, name });
  }
  async sendGoal(goal: object, feedbackCallback?: (feedback: unknown) => void): Promise<RclGoalHandle> {
    const goalId = nextId++;
    // Registered before the request: its result may arrive in the same chunk as the answer.
    const handle = new RemoteGoalHandle(goalId, feedbackCallback);
    goals.set(goalId, handle);
    const answer = (await request('goal.send', { client: this.id, goal_id: goalId, goal })) as {
      accepted: boolean;
      status: number;
    };
    handle.accepted = answer.accepted;
    if (handle.status === 0) handle.status = answer.status;
    return handle;
  }
  isActionServerAvailable(): boolean {
    return snapshot.available[String(this.id)] === true;
  }
  async waitForServer(timeoutMs = -1): Promise<boolean> {
    const deadline = timeoutMs < 0 ? Number.POSITIVE_INFINITY : Date.now() + timeoutMs;
    while (!this.isActionServerAvailable()) {
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return true;
  }
  destroy(): void {}
}

const module: RclModule = {
  init: async () => {
    await request('init');
  },
  shutdown: () => undefined,
  Node: RemoteNode,
  ActionClient: RemoteActionClient,
};

export default module;
