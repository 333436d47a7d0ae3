import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { LogRing } from '../logs/ring.ts';
import type { Lease } from '../control/arbiter.ts';
import type { RobotContext } from '../ros/context.ts';
import type { MotionResultMsg } from '../ros/messages.ts';
import { err, ok, type Result } from '../result.ts';
import type { SafetyState } from '../safety/store.ts';
import { plainChain } from '../safety/targets.ts';
import type { SequenceConfig } from './config.ts';
import { reapGroup, signalGroup } from './process-group.ts';
import type { RunnerToServer, SequenceJob, ServerToRunner } from './protocol.ts';

/** How long a stopped runner gets between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 3000;
/** How long a finished runner's leftover group members may take to be reaped after SIGKILL. */
const GROUP_REAP_MS = 1000;
/** Lines of runner output kept for GET /sequences/logs. */
export const SEQUENCE_LOG_LINES = 1000;

/** Options of one run, as POST /sequences/start takes them (validated). */
export interface RunOptions {
  readonly iterations: number;
  readonly delayS: number;
  /** Absolute bag folder, or undefined for no recording. */
  readonly bagPath: string | undefined;
  /** sequences.bag_root: the runner checks the bag folder's real path against it again when it creates it. */
  readonly bagRoot: string;
  readonly topics: readonly string[];
  readonly jointsAction: string;
  readonly poseAction: string;
}

/** The sequence status resource. */
export type SequenceStatus =
  | { readonly status: 'idle' }
  | {
      readonly status: 'running';
      readonly pid: number;
      readonly iteration: number;
      readonly n_iterations: number;
      readonly point: string;
      readonly started_at: string;
      readonly bag_path?: string;
    }
  | {
      readonly status: 'finished';
      readonly returncode: number;
      readonly pid: number;
      readonly started_at: string;
      readonly finished_at: string;
      readonly bag_path?: string;
    };

interface Run {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly startedAt: string;
  readonly bagPath: string | undefined;
  readonly iterations: number;
  iteration: number;
  point: string;
  readonly exited: Promise<number>;
  /** Resolves after the exit has been recorded. */
  done: Promise<void>;
  readonly goals: Set<AbortController>;
  readonly unsubscribe: (() => void)[];
  /** The run's hold on the arm: its goals are served only while it is not revoked. */
  readonly lease: Lease;
  /** 'rate' messages sent and not yet acknowledged, by id: each resolves its wait. */
  readonly rateAcks: Map<number, (error?: string) => void>;
}

/**
 * The file URL of the runner's compiled bundle, set where the sources run compiled (scripts/run-tests.mjs replaces the
 * name with the string); undeclared where they run under tsx.
 */
declare const ARMGATE_COMPILED_SEQUENCE_RUNNER: string | undefined;

/** The runner's process: its compiled bundle when the sources run compiled, else its TypeScript through tsx. */
const RUNNER =
  typeof ARMGATE_COMPILED_SEQUENCE_RUNNER === 'string'
    ? { file: fileURLToPath(ARMGATE_COMPILED_SEQUENCE_RUNNER), execArgv: [] }
    : {
        file: fileURLToPath(new URL('./runner.ts', import.meta.url)),
        execArgv: ['--import', import.meta.resolve('tsx')],
      };

/** How the supervisor starts runners. */
export interface SupervisorOptions {
  /**
   * `sim`: the runner's goals and topics are served from the context over IPC. `ros2`: the runner
   * reaches the stack with its own rclnodejs node (action types and timeouts from the context's
   * endpoints file).
   */
  readonly backend: 'sim' | 'ros2';
  /** Variables added to the runner's environment (which is the server's, without ARMGATE_TOKEN). */
  readonly env?: Readonly<Record<string, string>>;
  /** The app's safety envelope: on ros2 the runner holds its goals' targets to it. */
  readonly safety?: SafetyState | undefined;
  /**
   * The endpoints file's URDF: on ros2 a bag of every topic computes /tf, /tf_static and /robot_description from
   * it (or from the stack's robot_description parameter when it can be read) when the stack publishes none.
   */
  readonly robotDescriptionXml?: string;
}

/**
 * Starts and watches sequence runner processes, each in its own process group, their output line
 * by line into a ring. A run holds a lease of the motion arbiter from before it starts until its
 * process has exited, so only one runs at a time; every runner still alive is tracked, and stop
 * ends them all. On the simulator a runner's motion goals are served from the context (only while
 * its lease holds) and its topic subscriptions fed from the context (over IPC); on ROS 2 it has
 * its own node. Stop: a stop message and SIGTERM to the group, SIGKILL after 3 s.
 */
export class SequenceSupervisor {
  readonly logs = new LogRing(SEQUENCE_LOG_LINES);
  private readonly context: RobotContext;
  private readonly options: SupervisorOptions;
  /** Every runner started that has not yet exited. */
  private readonly live = new Set<Run>();
  /** The latest run, for the status. */
  private run: Run | undefined;
  private last: SequenceStatus = { status: 'idle' };
  private readonly statusListeners = new Set<(status: SequenceStatus) => void>();

  /** The execution rate runners on ros2 start with and are told of (pause 0, resume, the override). */
  private rate = 1;
  private nextRateId = 1;

  constructor(context: RobotContext, options: SupervisorOptions = { backend: 'sim' }) {
    this.context = context;
    this.options = options;
  }

  /** Process ids of the runners still alive. */
  livePids(): number[] {
    return [...this.live].map((run) => run.pid);
  }

  /** Calls `listener` with the status whenever it changes (a start, a progress message, an exit); returns the unsubscribe. */
  onStatus(listener: (status: SequenceStatus) => void): () => void {
    this.statusListeners.add(listener);
    return () => {
      this.statusListeners.delete(listener);
    };
  }

  /** The envelope the runner holds its goals' targets to on ros2 (the app's safety state), if one is set. */
  private runnerSafety() {
    const safety = this.options.safety;
    if (!safety?.envelope) return {};
    const { envelope, chain } = safety;
    return { safety: { envelope, chain: plainChain(chain), planning_frame: this.context.endpoints.planning_frame } };
  }

  private statusChanged(): void {
    if (this.statusListeners.size === 0) return;
    const status = this.status();
    for (const listener of this.statusListeners) listener(status);
  }

  status(): SequenceStatus {
    const run = this.run;
    if (!run) return this.last;
    return {
      status: 'running',
      pid: run.pid,
      iteration: run.iteration,
      n_iterations: run.iterations,
      point: run.point,
      started_at: run.startedAt,
      ...(run.bagPath ? { bag_path: run.bagPath } : {}),
    };
  }

  /** The URDF a ros2 runner computes the robot-state topics from: the stack's when it can be read, else the endpoints file's. */
  private async runnerUrdf(): Promise<string | undefined> {
    const stack = await this.context.robotDescription?.();
    return stack?.ok ? stack.value : this.options.robotDescriptionXml;
  }

  /**
   * Starts a runner under `lease` (taken from the arbiter by the caller, synchronously), which it
   * keeps until the process has exited. The run goes to the runner as one {@link SequenceJob}
   * message over its IPC channel. A lease revoked while the runner was being prepared starts nothing.
   */
  async start(config: SequenceConfig, options: RunOptions, lease: Lease): Promise<Result<number, string>> {
    const { interfaces, timeouts } = this.context.endpoints;
    const urdf = this.options.backend === 'ros2' && options.bagPath ? await this.runnerUrdf() : undefined;
    const job: SequenceJob = {
      config,
      iterations: options.iterations,
      delayS: options.delayS,
      actions: { joints: options.jointsAction, pose: options.poseAction },
      ...(options.bagPath ? { bag: { path: options.bagPath, root: options.bagRoot, topics: options.topics } } : {}),
      backend: this.options.backend,
      ...(this.options.backend === 'ros2'
        ? {
            rate: this.rate,
            ros: {
              joints_type: interfaces.move_to_joints.type,
              pose_type: interfaces.move_to_pose.type,
              timeouts,
              joint_states: { name: interfaces.joint_states.name, type: interfaces.joint_states.type },
              ...(urdf !== undefined ? { robot_description: urdf } : {}),
              ...this.runnerSafety(),
            },
          }
        : {}),
    };
    if (lease.signal.aborted) {
      lease.release();
      return err(`the sequence was not started: ${String(lease.signal.reason)} while it was being prepared`);
    }
    const env = { ...process.env, ...this.options.env };
    delete env.ARMGATE_TOKEN;
    const child = fork(RUNNER.file, [], {
      execArgv: RUNNER.execArgv,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      env,
    });
    const pid = child.pid;
    if (pid === undefined) {
      lease.release();
      return err('the runner process could not be started');
    }
    // The run travels as one message: the configuration never touches the disk.
    child.send({ type: 'job', job } satisfies ServerToRunner);
    lease.describe(`a motion sequence is running (pid ${pid})`);
    const exited = new Promise<number>((resolve) =>
      child.once('exit', (code, signal) => resolve(code ?? (signal === 'SIGKILL' ? 137 : 143))),
    );
    const run: Run = {
      child,
      pid,
      startedAt: new Date().toISOString(),
      bagPath: options.bagPath,
      iterations: options.iterations,
      iteration: 0,
      point: 'starting',
      exited,
      done: Promise.resolve(),
      goals: new Set(),
      unsubscribe: [],
      lease,
      rateAcks: new Map(),
    };
    this.run = run;
    this.live.add(run);
    this.statusChanged();
    // A revoked lease (POST /stop, shutdown) cancels the goals the runner has in flight at once.
    lease.signal.addEventListener('abort', () => this.cancelGoals(run, String(lease.signal.reason)), { once: true });
    this.pipeLines(child.stdout, '');
    this.pipeLines(child.stderr, 'stderr: ');
    child.on('message', (message: RunnerToServer) => this.onMessage(run, message));
    child.on('error', (error) => this.logs.push(`runner channel error: ${error.message}`));
    this.logs.push(
      `runner started (pid ${pid}): ${options.iterations} iteration(s)${options.bagPath ? `, recording to ${options.bagPath}` : ''}`,
    );
    run.done = exited.then(async (code) => {
      if (!(await reapGroup(pid, GROUP_REAP_MS)))
        this.logs.push(
          `runner ${pid} exited, but a process of its group still ran ${GROUP_REAP_MS / 1000} s after SIGKILL`,
        );
      for (const stop of run.unsubscribe) stop();
      this.cancelGoals(run, 'the sequence runner ended');
      this.logs.push(`runner ${pid} exited with code ${code}`);
      const finished: SequenceStatus = {
        status: 'finished',
        returncode: code,
        pid,
        started_at: run.startedAt,
        finished_at: new Date().toISOString(),
        ...(run.bagPath ? { bag_path: run.bagPath } : {}),
      };
      if (this.run === run) {
        this.last = finished;
        this.run = undefined;
      }
      this.live.delete(run);
      lease.release();
      this.statusChanged();
    });
    return ok(pid);
  }

  private pipeLines(stream: NodeJS.ReadableStream | null, prefix: string): void {
    if (!stream) return;
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const parts = (partial + chunk).split(/\r?\n/);
      partial = parts.pop() ?? '';
      for (const line of parts) this.logs.push(prefix + line);
      if (partial.length > 64 * 1024) {
        this.logs.push(prefix + partial);
        partial = '';
      }
    });
    stream.on('end', () => {
      if (partial) this.logs.push(prefix + partial);
    });
  }

  private onMessage(run: Run, message: RunnerToServer): void {
    // A runner that dies between the check and the send must not raise EPIPE in the server.
    const reply = (answer: ServerToRunner) => {
      if (run.child.connected) run.child.send(answer, (error) => error && undefined);
    };
    if (message.type === 'progress') {
      run.iteration = message.iteration;
      run.point = message.point;
      if (this.run === run) this.statusChanged();
    } else if (message.type === 'subscribe') {
      const offered = this.context.topics();
      const wanted = message.topics.length === 0 ? offered : offered.filter((t) => message.topics.includes(t.name));
      reply({ type: 'topics', topics: wanted });
      for (const topic of wanted) {
        run.unsubscribe.push(
          this.context.subscribe(topic.name, (msg) =>
            reply({ type: 'message', topic: topic.name, msg, receivedNs: String(BigInt(Date.now()) * 1_000_000n) }),
          ),
        );
      }
    } else if (message.type === 'claim') {
      const revoked = run.lease.signal.aborted;
      const why = revoked
        ? `the sequence no longer holds the arm: ${String(run.lease.signal.reason)}`
        : "the arm is the sequence's";
      reply({ type: 'claim_result', id: message.id, granted: !revoked, message: why });
    } else if (message.type === 'goal') {
      void this.serveGoal(run, message).then(reply);
    } else if (message.type === 'rate_applied') {
      run.rateAcks.get(message.id)?.(
        message.error === undefined
          ? undefined
          : `the sequence runner (pid ${run.pid}) could not apply it: ${message.error}`,
      );
    }
  }

  private cancelGoals(run: Run, reason: string): void {
    for (const goal of run.goals) goal.abort(reason);
  }

  /** Serves a goal on the action the runner named, if the context serves it and the run still holds the arm. */
  private async serveGoal(run: Run, message: Extract<RunnerToServer, { type: 'goal' }>): Promise<ServerToRunner> {
    if (run.lease.signal.aborted) {
      return {
        type: 'result',
        id: message.id,
        result: { success: false, message: `the sequence no longer holds the arm: ${String(run.lease.signal.reason)}` },
      };
    }
    const { move_to_joints, move_to_pose } = this.context.endpoints.interfaces;
    const served = message.kind === 'joints' ? move_to_joints.name : move_to_pose.name;
    const normalize = (name: string) => name.replace(/^\//, '');
    if (normalize(message.action) !== normalize(served)) {
      return {
        type: 'no_server',
        id: message.id,
        message: `no action server '${message.action}' for ${message.kind === 'joints' ? 'MoveToJoints' : 'MoveToPose'} goals (this stack serves '${served}')`,
      };
    }
    const abort = new AbortController();
    run.goals.add(abort);
    try {
      const result =
        message.kind === 'joints'
          ? await this.context.moveToJoints(message.goal, { signal: abort.signal })
          : await this.context.moveToPose(message.goal, { signal: abort.signal });
      const answer: MotionResultMsg = result.ok ? result.value : { success: false, message: result.error.message };
      return { type: 'result', id: message.id, result: answer };
    } finally {
      run.goals.delete(abort);
    }
  }

  /**
   * How long a runner may take to acknowledge a rate: a pause waits for a goal being sent to be taken
   * by its server and then for the cancel to be confirmed, each bounded by server_wait_s; 1 s more for IPC.
   */
  rateAckMs(): number {
    return (2 * this.context.endpoints.timeouts.server_wait_s + 1) * 1000;
  }

  /**
   * On ros2, where a runner's own node sends its goals: tells the runners alive of a pause (0), a
   * resume or the override (their goals' speed), starts later runners at it, and resolves once every
   * runner told has applied it (for a pause: its goals cancelled on the stack with the cancels
   * confirmed, none sent until the resume), exited, or lost the arm to a stop (which ends it). The
   * value: how many runners were told (0 on the simulator, whose runners' goals go through the
   * context). An error names each runner that did not acknowledge within {@link rateAckMs} or could not
   * apply the rate; what then is the caller's decision (a pause stops everything).
   */
  async setRate(rate: number): Promise<Result<number, string>> {
    if (this.options.backend !== 'ros2') return ok(0);
    this.rate = rate;
    const runs = [...this.live].filter((run) => run.child.connected);
    const failures = (await Promise.all(runs.map((run) => this.tellRate(run, rate)))).filter((f) => f !== undefined);
    return failures.length > 0 ? err(failures.join('; ')) : ok(runs.length);
  }

  /** Sends `rate` to one runner; resolves with why it was not applied, or undefined once it is (or cannot matter). */
  private tellRate(run: Run, rate: number): Promise<string | undefined> {
    const id = this.nextRateId++;
    const waitMs = this.rateAckMs();
    const what = rate <= 0 ? 'the pause' : `the rate ${Math.round(rate * 100)} %`;
    return new Promise((resolve) => {
      const done = (error?: string) => {
        clearTimeout(timer);
        run.rateAcks.delete(id);
        run.lease.signal.removeEventListener('abort', revoked);
        resolve(error);
      };
      const timer = setTimeout(
        () => done(`the sequence runner (pid ${run.pid}) did not confirm ${what} within ${waitMs / 1000} s`),
        waitMs,
      ).unref();
      // A stop (or shutdown) revoked the run: it is being ended, nothing of it waits for a rate any more.
      const revoked = () => done();
      if (run.lease.signal.aborted) return done();
      run.lease.signal.addEventListener('abort', revoked, { once: true });
      // A runner that exited sends nothing more.
      void run.exited.then(() => done());
      run.rateAcks.set(id, done);
      // A failed send (the channel closing) is not an answer: the runner's exit or the bound is.
      run.child.send({ type: 'rate', id, rate } satisfies ServerToRunner, (error) => error && undefined);
    });
  }

  /**
   * Stops every runner still alive: their goals are cancelled, SIGTERM goes to each process group
   * (the runner closes its bag), SIGKILL after 3 s. Resolves true when a runner was running.
   */
  async stop(): Promise<boolean> {
    const runs = [...this.live];
    await Promise.all(runs.map((run) => this.stopRun(run)));
    return runs.length > 0;
  }

  private async stopRun(run: Run): Promise<void> {
    if (run.child.connected) run.child.send({ type: 'stop' } satisfies ServerToRunner, (error) => error && undefined);
    signalGroup(run.pid, 'SIGTERM');
    this.cancelGoals(run, 'stopped');
    const killed = await Promise.race([
      run.exited.then(() => false),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(true), KILL_GRACE_MS).unref()),
    ]);
    if (killed) {
      this.logs.push(`runner did not exit within ${KILL_GRACE_MS / 1000} s of SIGTERM: SIGKILL`);
      signalGroup(run.pid, 'SIGKILL');
    }
    await run.done;
  }
}
