/**
 * The test stack of tests/ros/stack (real ROS 2 nodes in their own process) as the suites of tests/ros2
 * drive it: started on this suite's ROS domain, its JSON-line events collected from stdout, commands
 * sent on stdin (each answered by an ack), killed and started again. Its stdin is a pipe, so it dies
 * with the test process whatever happens.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';

const ROOT = path.resolve(import.meta.dirname, '../../..');

/** One line the stack printed: `{"event": ..., ...}`. */
export interface StackEvent {
  readonly event: string;
  readonly [key: string]: unknown;
}

export class TestStack {
  readonly events: StackEvent[] = [];
  private child: ChildProcess | undefined;
  private waiters = new Set<() => void>();
  private stderr = '';
  private exited: Promise<number | null> = Promise.resolve(null);

  private readonly flags: readonly string[];

  constructor(flags: readonly string[] = []) {
    this.flags = flags;
  }

  /** Starts the stack and waits for its `ready` line. */
  async start(timeoutMs = 60_000): Promise<void> {
    if (this.child) throw new Error('the test stack is already running');
    const from = this.events.length;
    const child = spawn(process.execPath, ['--import', 'tsx', 'tests/ros/stack/main.ts', ...this.flags], {
      cwd: ROOT,
      env: process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-20_000);
    });
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.on('line', (line) => {
      try {
        this.events.push(JSON.parse(line) as StackEvent);
      } catch {
        this.events.push({ event: 'unparsed', line });
      }
      for (const wake of this.waiters) wake();
    });
    void this.exited.then(() => {
      if (this.child === child) this.child = undefined;
      for (const wake of this.waiters) wake();
    });
    await this.waitFor((e) => e.event === 'ready', timeoutMs, from);
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** What the stack wrote to stderr lately (for failure messages). */
  get diagnostics(): string {
    return this.stderr.slice(-2000);
  }

  /** The first event from index `from` on that `match` accepts; rejects after `timeoutMs`. */
  waitFor(match: (e: StackEvent) => boolean, timeoutMs = 10_000, from = 0): Promise<StackEvent> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.events.slice(from).find(match);
        if (found) {
          done();
          resolve(found);
        } else if (!this.child) {
          done();
          reject(new Error(`the test stack exited before the awaited event; stderr: ${this.diagnostics}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no such event from the test stack within ${timeoutMs} ms; stderr: ${this.diagnostics}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }

  /** The events since index `from` of one kind (e.g. every `goal`). */
  since(from: number, event: string): StackEvent[] {
    return this.events.slice(from).filter((e) => e.event === event);
  }

  /** Sends a command and waits for its ack (throws when the stack refuses it); returns the ack. */
  async command(cmd: Record<string, unknown>, timeoutMs = 5000): Promise<StackEvent> {
    const child = this.child;
    if (!child?.stdin) throw new Error('the test stack is not running');
    const from = this.events.length;
    child.stdin.write(`${JSON.stringify(cmd)}\n`);
    const ack = await this.waitFor((e) => e.event === 'ack', timeoutMs, from);
    if (ack.ok !== true) throw new Error(`the test stack refused ${JSON.stringify(cmd)}: ${String(ack.error)}`);
    return ack;
  }

  /** The stack's own view of the arm. */
  async state(): Promise<{ positions: number[]; moving: boolean }> {
    const from = this.events.length;
    await this.command({ cmd: 'state' });
    const state = await this.waitFor((e) => e.event === 'state', 5000, from);
    return { positions: state.positions as number[], moving: state.moving as boolean };
  }

  /** Ends the stack with `signal` (SIGKILL: a crash) and waits until it has exited. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    const child = this.child;
    if (!child) return null;
    child.kill(signal);
    const code = await this.exited;
    this.child = undefined;
    return code;
  }
}

/**
 * This suite's ROS domain: ARMGATE_ROS2_DOMAIN_BASE (set by scripts/ros2/test.sh) plus `offset`,
 * distinct per suite so suites running side by side do not see each other's nodes. Call it before
 * anything initializes rclnodejs (in the suite's first lines).
 */
export function useDomain(offset: number): number {
  const base = Number(process.env.ARMGATE_ROS2_DOMAIN_BASE ?? 140);
  const id = base + offset;
  process.env.ROS_DOMAIN_ID = String(id);
  return id;
}

/** Throws, saying what to run, when this process has no ROS 2 (the runner sources scripts/ros2/env.sh). */
export function requireRos2(): void {
  if (!process.env.ROS_DISTRO || !process.env.AMENT_PREFIX_PATH)
    throw new Error(
      'no ROS 2 in this environment: run these suites with `npm run test:ros2` (after npm run ros2:build)',
    );
}
