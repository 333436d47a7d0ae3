/**
 * The stand-in "graph" across processes, for tests only: the sequence runner is a process of its
 * own, and on robot.backend ros2 it makes its own rclnodejs node. In tests that node is
 * tests/support/rclnodejs-standin-remote.ts (mapped to `rclnodejs` by rclnodejs-hook.mjs), which
 * forwards every call over a Unix socket to this server, which performs it on an RclModule of the
 * test process: the in-process stand-in backed by the simulator. So the runner's goals move the
 * same simulated arm the server reads, and its raw subscriptions get the same joint states.
 *
 * Protocol: newline-delimited JSON. Requests `{id, op, ...}` are answered `{re: id, value}` or
 * `{re: id, error}`; events `{event, ...}` carry graph snapshots (every 100 ms: topics and which
 * action servers are available, what rclnodejs answers synchronously), subscription messages,
 * goal feedback and results. Byte arrays travel as `{b64}`, typed arrays as arrays.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { RclActionClient, RclEntity, RclGoalHandle, RclModule, RclNode } from '../../lib/ros/rclnodejs-api.ts';

/** JSON for the wire: Buffers as {b64}, other typed arrays as arrays. */
export function encodeValue(value: unknown): unknown {
  if (value instanceof Uint8Array && (Buffer.isBuffer(value) || value.constructor === Uint8Array))
    return { b64: Buffer.from(value).toString('base64') };
  if (ArrayBuffer.isView(value)) return Array.from(value as unknown as ArrayLike<number>);
  if (Array.isArray(value)) return value.map(encodeValue);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, encodeValue(v)]));
  return value;
}

/** The inverse of {@link encodeValue} for bytes: {b64} becomes a Buffer. */
export function decodeValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(decodeValue);
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    if (typeof record.b64 === 'string' && Object.keys(record).length === 1) return Buffer.from(record.b64, 'base64');
    return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, decodeValue(v)]));
  }
  return value;
}

/** Calls `handle` with each newline-delimited JSON object read from `socket`. */
export function onJsonLines(socket: Socket, handle: (message: Record<string, unknown>) => void): void {
  let partial = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (line !== '') handle(JSON.parse(line) as Record<string, unknown>);
  });
}

export interface StandinGraph {
  /** Environment for a runner process: the hook that maps `rclnodejs` to the remote stand-in, the socket, a "sourced ROS 2". */
  readonly env: Record<string, string>;
  /** Names of the nodes remote processes created. */
  readonly nodes: string[];
  close(): Promise<void>;
}

interface Connection {
  readonly nodes: Map<number, RclNode>;
  readonly subscriptions: Map<number, { node: RclNode; entity: RclEntity }>;
  readonly actions: Map<number, RclActionClient>;
  readonly goals: Map<number, RclGoalHandle>;
}

const HOOK = fileURLToPath(new URL('./rclnodejs-hook.mjs', import.meta.url));

/**
 * Serves `rcl` to remote stand-ins on a Unix socket. `amentPrefix` becomes the runner's
 * AMENT_PREFIX_PATH (where it reads the installed .msg definitions).
 */
export async function serveStandinGraph(rcl: RclModule, amentPrefix: string): Promise<StandinGraph> {
  const dir = await mkdtemp(path.join(tmpdir(), 'armgate-graph-'));
  const socketPath = path.join(dir, 'graph.sock');
  const nodes: string[] = [];
  const sockets = new Set<Socket>();

  const server = createServer((socket) => {
    sockets.add(socket);
    const c: Connection = { nodes: new Map(), subscriptions: new Map(), actions: new Map(), goals: new Map() };
    const emit = (message: object) => {
      if (!socket.destroyed) socket.write(`${JSON.stringify(encodeValue(message))}\n`);
    };
    const snapshot = setInterval(() => {
      const node = c.nodes.values().next().value;
      if (!node) return;
      const available: Record<string, boolean> = {};
      for (const [id, client] of c.actions) available[id] = client.isActionServerAvailable();
      emit({ event: 'graph', topics: node.getTopicNamesAndTypes(), available });
    }, 100);

    const perform = async (m: Record<string, unknown>): Promise<unknown> => {
      const id = m.id as number;
      const nodeOf = () => {
        const node = c.nodes.get(m.node as number);
        if (!node) throw new Error(`no node ${String(m.node)}`);
        return node;
      };
      switch (m.op) {
        case 'init':
          return null;
        case 'node.create': {
          const node = new rcl.Node(m.name as string);
          c.nodes.set(m.node as number, node);
          nodes.push(m.name as string);
          return null;
        }
        case 'node.spin':
          nodeOf().spin();
          return null;
        case 'node.destroy':
          nodeOf().destroy();
          c.nodes.delete(m.node as number);
          return null;
        case 'sub.create': {
          const node = nodeOf();
          const sub = m.sub as number;
          const entity = node.createSubscription(
            m.type as string,
            m.topic as string,
            { isRaw: m.raw === true },
            (message) => emit({ event: 'message', sub, message }),
          );
          c.subscriptions.set(sub, { node, entity });
          return null;
        }
        case 'sub.destroy': {
          const entry = c.subscriptions.get(m.sub as number);
          entry?.node.destroySubscription(entry.entity);
          c.subscriptions.delete(m.sub as number);
          return null;
        }
        case 'action.create':
          c.actions.set(m.client as number, new rcl.ActionClient(nodeOf(), m.type as string, m.name as string));
          return null;
        case 'goal.send': {
          const client = c.actions.get(m.client as number);
          if (!client) throw new Error(`no action client ${String(m.client)}`);
          const gid = m.goal_id as number;
          const handle = await client.sendGoal(decodeValue(m.goal) as object, (feedback) =>
            emit({ event: 'feedback', goal_id: gid, feedback }),
          );
          c.goals.set(gid, handle);
          if (handle.isAccepted()) {
            handle.getResult().then(
              (result) => emit({ event: 'result', goal_id: gid, result, status: handle.status }),
              (e: unknown) => emit({ event: 'result', goal_id: gid, error: String(e), status: handle.status }),
            );
          }
          return { accepted: handle.isAccepted(), status: handle.status };
        }
        case 'goal.cancel': {
          const handle = c.goals.get(m.goal_id as number);
          if (!handle) throw new Error(`no goal ${String(m.goal_id)}`);
          const answer = await handle.cancelGoal();
          emit({ event: 'status', goal_id: m.goal_id, status: handle.status });
          return answer;
        }
        default:
          throw new Error(`stand-in graph: unknown op ${String(m.op)} (request ${id})`);
      }
    };

    onJsonLines(socket, (m) => {
      perform(m).then(
        (value) => emit({ re: m.id, value }),
        (e: unknown) => emit({ re: m.id, error: e instanceof Error ? e.message : String(e) }),
      );
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(snapshot);
      sockets.delete(socket);
      // The remote process is gone: its node leaves the graph (its goals run on, as on ROS 2).
      for (const { node, entity } of c.subscriptions.values()) node.destroySubscription(entity);
      for (const node of c.nodes.values()) node.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, resolve);
  });
  return {
    env: {
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${pathToFileURL(HOOK).href}`.trim(),
      ARMGATE_STANDIN_GRAPH: socketPath,
      ROS_DISTRO: 'standin',
      AMENT_PREFIX_PATH: amentPrefix,
    },
    nodes,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
