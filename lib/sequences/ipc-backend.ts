import { Rosbag2Writer } from '../bag/writer.ts';
import { goalOf, type SequencePoint } from './config.ts';
import type { MoveAnswer, Recording, RunnerBackend } from './backend.ts';
import type { TopicInfo } from '../ros/context.ts';
import type { RunnerToServer, ServerToRunner } from './protocol.ts';

/**
 * Messages held while the bag opens: the server sends a transient-local topic's last message
 * (/robot_description, /tf_static) right after the topic list, before the bag can take it.
 */
const MAX_EARLY_MESSAGES = 1000;

/**
 * The runner's backend on the simulator: goals and topic messages travel over Node's IPC channel
 * to and from the server, which serves them from its context (lib/sequences/supervisor.ts).
 */
export class IpcBackend implements RunnerBackend {
  private nextGoalId = 1;
  private readonly pending = new Map<number, (answer: MoveAnswer) => void>();
  private topicsReply: ((topics: readonly TopicInfo[]) => void) | undefined;
  private bag: Rosbag2Writer | undefined;
  /** Set between the topic list and the bag's opening: the messages that arrive meanwhile. */
  private early: { topic: string; msg: unknown; receivedNs: string }[] | undefined;
  private readonly send: (message: RunnerToServer) => void;
  private readonly warn: (line: string) => void;

  /** `send` writes to the IPC channel; feed every message from the server to {@link onMessage}. */
  constructor(send: (message: RunnerToServer) => void, warn: (line: string) => void) {
    this.send = send;
    this.warn = warn;
  }

  onMessage(message: ServerToRunner): void {
    if (message.type === 'result') this.pending.get(message.id)?.({ kind: 'result', result: message.result });
    else if (message.type === 'no_server')
      this.pending.get(message.id)?.({ kind: 'no_server', message: message.message });
    else if (message.type === 'topics') {
      this.early = [];
      this.topicsReply?.(message.topics);
    } else if (message.type === 'message') {
      if (this.bag) this.write(this.bag, message);
      else if (this.early && this.early.length < MAX_EARLY_MESSAGES) this.early.push(message);
    }
  }

  private write(bag: Rosbag2Writer, message: { topic: string; msg: unknown; receivedNs: string }): void {
    bag
      .write(message.topic, message.msg, BigInt(message.receivedNs))
      .catch((e: unknown) => this.warn(`bag write failed: ${(e as Error).message}`));
  }

  move(action: string, point: SequencePoint): Promise<MoveAnswer> {
    const id = this.nextGoalId++;
    return new Promise((resolve) => {
      this.pending.set(id, (answer) => {
        this.pending.delete(id);
        resolve(answer);
      });
      this.send({ type: 'goal', id, action, ...goalOf(point) });
    });
  }

  async record(folder: string, topics: readonly string[]): Promise<Recording> {
    const offered = await new Promise<readonly TopicInfo[]>((resolve) => {
      this.topicsReply = resolve;
      this.send({ type: 'subscribe', topics });
    });
    this.topicsReply = undefined;
    let bag: Rosbag2Writer;
    try {
      bag = await Rosbag2Writer.open(folder, offered);
    } catch (error) {
      this.early = undefined;
      throw error;
    }
    const early = this.early ?? [];
    this.early = undefined;
    this.bag = bag;
    for (const message of early) this.write(bag, message);
    return {
      topics: offered.map((t) => `${t.name} (${t.type})`),
      close: () => {
        this.bag = undefined;
        return bag.close();
      },
    };
  }

  /**
   * Ends the goals still awaited with success false and `reason`: the server cancels the goals it
   * serves for this runner when the runner ends, and when the server is gone nobody answers them.
   */
  async close(reason: string): Promise<void> {
    for (const answer of [...this.pending.values()])
      answer({ kind: 'result', result: { success: false, message: reason } });
  }
}
