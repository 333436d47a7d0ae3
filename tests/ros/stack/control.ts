/**
 * The real ros2_control stack under the test stack (the overlay `npm run ros2:build` builds from
 * ../shared/ros2-control): robot_state_publisher (/tf, /robot_description) and ros2_control_node with
 * a mock iiwa 7 (mock_components/GenericSystem: position command, position and velocity state, the
 * URDF's limits), joint_state_broadcaster (/joint_states at 100 Hz) and joint_trajectory_controller
 * named `iiwa_arm_controller` with the original stack's parameters, loaded, configured and activated
 * through controller_manager's services. Each process runs under a watch that kills it when the stack
 * process goes (its stdin, a pipe from here, closes), so a SIGKILLed stack leaves nothing behind.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { at, type RobotModel } from './model.ts';
import type { StackNode } from './rcl.ts';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The controller's name, as the endpoints file names its action and topic. */
export const CONTROLLER = 'iiwa_arm_controller';
export const BROADCASTER = 'joint_state_broadcaster';

/** A program of the overlay, found on AMENT_PREFIX_PATH (`lib/<package>/<name>`). */
export function findProgram(pkg: string, name: string): string | undefined {
  for (const prefix of (process.env.AMENT_PREFIX_PATH ?? '').split(':').filter(Boolean)) {
    const file = path.join(prefix, 'lib', pkg, name);
    if (existsSync(file)) return file;
  }
  return undefined;
}

/** The URDF with a `<ros2_control>` system of mock hardware for the arm's joints, in `order`. */
export function withRos2Control(urdf: string, model: RobotModel, start: readonly number[], order: readonly number[]) {
  const joints = order
    .map((i) => {
      const name = at(model.jointNames, i);
      const limit = at(model.limits, i);
      return [
        `    <joint name="${name}">`,
        `      <command_interface name="position"><param name="min">${limit.min}</param><param name="max">${limit.max}</param></command_interface>`,
        `      <state_interface name="position"><param name="initial_value">${at(start, i)}</param></state_interface>`,
        `      <state_interface name="velocity"><param name="initial_value">0.0</param></state_interface>`,
        '    </joint>',
      ].join('\n');
    })
    .join('\n');
  // calculate_dynamics: the mock reports the velocity of its position commands (finite differences).
  const system = [
    '  <ros2_control name="MockIiwa7" type="system">',
    '    <hardware>',
    '      <plugin>mock_components/GenericSystem</plugin>',
    '      <param name="calculate_dynamics">true</param>',
    '    </hardware>',
    joints,
    '  </ros2_control>',
  ].join('\n');
  return urdf.replace(/<\/robot>\s*$/, `${system}\n</robot>\n`);
}

const yamlList = (items: readonly string[]) => `[${items.join(', ')}]`;

/** controller_manager's and the two controllers' parameters (the original stack's iiwa_arm_controller). */
export function controllersYaml(joints: readonly string[], broadcastOrder: readonly string[]): string {
  return `controller_manager:
  ros__parameters:
    update_rate: 100
    # Commands beyond the URDF's position limits are clamped (its velocity limits do not hold a position command here).
    enforce_command_limits: true
    ${CONTROLLER}:
      type: joint_trajectory_controller/JointTrajectoryController
    ${BROADCASTER}:
      type: joint_state_broadcaster/JointStateBroadcaster
${CONTROLLER}:
  ros__parameters:
    joints: ${yamlList(joints)}
    command_interfaces: [position]
    state_interfaces: [position, velocity]
    allow_partial_joints_goal: false
    allow_nonzero_velocity_at_trajectory_end: false
    interpolate_from_desired_state: true
    action_monitor_rate: 20.0
${BROADCASTER}:
  ros__parameters:
    joints: ${yamlList(broadcastOrder)}
    interfaces: [position, velocity]
`;
}

/** A ROS parameters file with one string parameter (robot_state_publisher's robot_description). */
function stringParamYaml(node: string, name: string, value: string): string {
  return `${node}:\n  ros__parameters:\n    ${name}: ${JSON.stringify(value)}\n`;
}

export interface ControlProcesses {
  /**
   * Both nodes have read their parameters files (the controllers are active: controller_manager had the description
   * robot_state_publisher read from its file): the files' folder goes now, not at {@link stop}, which a stack killed
   * (SIGKILL, or its 2 s way out running over) never reaches.
   */
  filesRead(): void;
  /** SIGINT to both, SIGKILL after `graceMs`; resolves once both have exited (the files' folder gone). */
  stop(graceMs?: number): Promise<void>;
}

/**
 * A child under a watch: bash runs it with stdin from /dev/null and kills it (SIGKILL) when its own
 * stdin, a pipe from this process, closes (this process ended, however); SIGINT and SIGTERM to the
 * watch go to the child.
 */
function watched(program: string, args: readonly string[], onLine: (line: string) => void): ChildProcess {
  const script =
    'exec 3<&0; "$@" </dev/null & c=$!; trap \'kill -INT $c 2>/dev/null\' INT TERM; ' +
    '{ cat <&3 >/dev/null; kill -KILL $c 2>/dev/null; } & w=$!; ' +
    'while kill -0 $c 2>/dev/null; do wait $c; done; kill $w 2>/dev/null; exit 0';
  const child = spawn('bash', ['-c', script, 'watch', program, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  for (const stream of [child.stdout, child.stderr]) if (stream) createInterface({ input: stream }).on('line', onLine);
  return child;
}

/** Starts robot_state_publisher and ros2_control_node on the files written for them. */
export function startControlProcesses(
  urdf: string,
  controllers: string,
  log: (line: string) => void,
  onControllerError: (text: string) => void,
): ControlProcesses {
  const rsp = findProgram('robot_state_publisher', 'robot_state_publisher');
  const cm = findProgram('controller_manager', 'ros2_control_node');
  if (!rsp || !cm)
    throw new Error(
      'no robot_state_publisher or ros2_control_node on AMENT_PREFIX_PATH: the ros2_control overlay is not built or not sourced (npm run ros2:build, then . scripts/ros2/env.sh)',
    );
  const dir = mkdtempSync(path.join(tmpdir(), 'armgate-stack-control-'));
  const rspParams = path.join(dir, 'rsp.yaml');
  const cmParams = path.join(dir, 'controllers.yaml');
  writeFileSync(rspParams, stringParamYaml('robot_state_publisher', 'robot_description', urdf));
  writeFileSync(cmParams, controllers);
  const children = [
    watched(rsp, ['--ros-args', '--params-file', rspParams], (line) => log(`robot_state_publisher: ${line}`)),
    watched(cm, ['--ros-args', '--params-file', cmParams], (line) => {
      log(`ros2_control_node: ${line}`);
      if (line.includes('[ERROR]') && line.includes(`[${CONTROLLER}]`))
        onControllerError(line.replace(/^.*?\]: /, '').trim());
    }),
  ];
  const exited = children.map((c) => new Promise<void>((resolve) => c.once('exit', () => resolve())));
  const removeFiles = () => rmSync(dir, { recursive: true, force: true });
  return {
    filesRead: removeFiles,
    async stop(graceMs = 1000) {
      for (const c of children) if (c.exitCode === null) c.kill('SIGINT');
      const all = Promise.all(exited);
      const timer = setTimeout(() => {
        for (const c of children) c.stdin?.end(); // the watch SIGKILLs its child
      }, graceMs);
      await all;
      clearTimeout(timer);
      removeFiles();
    },
  };
}

interface ServiceClient {
  waitForService(timeoutMs?: number): Promise<boolean>;
  sendRequest(request: object, callback: (response: unknown) => void): void;
}

/** One call of a service; rejects when there is no server or no answer within `timeoutMs`. */
async function callService(
  client: ServiceClient,
  name: string,
  request: object,
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  if (!(await client.waitForService(timeoutMs))) throw new Error(`${name}: no service within ${timeoutMs} ms`);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name}: no answer within ${timeoutMs} ms`)), timeoutMs);
    client.sendRequest(request, (response) => {
      clearTimeout(timer);
      resolve((response ?? {}) as Record<string, unknown>);
    });
  });
}

/** controller_manager's services as the spawner calls them, from a node of the stack. */
export class ControllerManager {
  private readonly node: StackNode & { createClient(type: string, name: string): ServiceClient };

  constructor(node: StackNode) {
    this.node = node as StackNode & { createClient(type: string, name: string): ServiceClient };
  }

  private readonly clients = new Map<string, ServiceClient>();

  private async call(service: string, type: string, request: object, timeoutMs = 20_000, checkOk = true) {
    const name = `/controller_manager/${service}`;
    let client = this.clients.get(name);
    if (!client) {
      client = this.node.createClient(`controller_manager_msgs/srv/${type}`, name);
      this.clients.set(name, client);
    }
    const response = await callService(client, name, request, timeoutMs);
    if (checkOk && response.ok !== true) throw new Error(`${name} ${JSON.stringify(request)} failed`);
    return response;
  }

  /** The controllers controller_manager has, by name: their lifecycle state (list_controllers). */
  async states(): Promise<Map<string, string>> {
    const r = await this.call('list_controllers', 'ListControllers', {}, 20_000, false);
    const list = (r.controller ?? []) as { name: string; state: string }[];
    return new Map(Array.from(list, (c) => [c.name, c.state]));
  }

  /**
   * Loads, configures and activates the controllers (STRICT), as `spawner NAME...` does: each step again until it
   * holds (controller_manager takes the hardware from /robot_description, which robot_state_publisher publishes
   * when it is up: before that, loading fails), within `timeoutMs`.
   */
  async activate(names: readonly string[], timeoutMs = 40_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    let why = '';
    while (Date.now() < end) {
      try {
        const states = await this.states();
        const missing = names.filter((n) => !states.has(n));
        for (const name of missing) await this.call('load_controller', 'LoadController', { name });
        const now = missing.length > 0 ? await this.states() : states;
        for (const name of names)
          if (now.get(name) === 'unconfigured')
            await this.call('configure_controller', 'ConfigureController', { name });
        const inactive = names.filter((n) => now.get(n) !== 'active');
        if (inactive.length > 0) await this.switch(inactive, []);
        const done = await this.states();
        if (names.every((n) => done.get(n) === 'active')) return;
        why = names.map((n) => `${n} ${done.get(n) ?? 'not loaded'}`).join(', ');
      } catch (e) {
        why = (e as Error).message;
      }
      await sleep(500);
    }
    throw new Error(`the controllers did not become active within ${timeoutMs} ms: ${why}`);
  }

  /** Activates and deactivates controllers (switch_controller, STRICT, at once). */
  async switch(activate: readonly string[], deactivate: readonly string[]): Promise<void> {
    await this.call('switch_controller', 'SwitchController', {
      activate_controllers: [...activate],
      deactivate_controllers: [...deactivate],
      strictness: 2,
      activate_asap: true,
      timeout: { sec: 5, nanosec: 0 },
    });
  }
}

/** Waits until `ready()` holds, polling every 50 ms; rejects after `timeoutMs` saying `what`. */
export async function until(ready: () => boolean, timeoutMs: number, what: string): Promise<void> {
  for (const end = Date.now() + timeoutMs; !ready(); await sleep(50))
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
}
