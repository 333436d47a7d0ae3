/**
 * A live armgate server whose context is the rclnodejs context (lib/ros/rcl-context.ts) over the
 * rclnodejs stand-in (tests/support/rclnodejs-standin.ts), the stand-in backed by a simulator.
 * Sequence runners (processes of their own) reach the same stand-in through the stand-in graph
 * (tests/support/standin-graph.ts), with the .msg files of tests/fixtures/ament as the installed
 * interface packages.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { RclContext } from '../../lib/ros/rcl-context.ts';
import type { EndpointsFile } from '../../lib/settings/endpoints.ts';
import { type RunningServer, startServer } from '../../lib/server/start.ts';
import { catalog } from '../../handlers/index.ts';
import type { Config } from '../../lib/settings/load.ts';
import type { SteppedClock } from '../../lib/clock.ts';
import { SimContext } from '../../lib/sim/context.ts';
import { createStandin, type Standin } from './rclnodejs-standin.ts';
import { type StandinGraph, serveStandinGraph } from './standin-graph.ts';

/** The install prefix whose share/<pkg>/msg holds the fixture .msg files. */
export const FIXTURE_AMENT_PREFIX = fileURLToPath(new URL('../fixtures/ament', import.meta.url));
import { type SettingsOverrides, testConfig, withOwnPositionsFile } from './server.ts';

export interface RclTestServer {
  readonly url: string;
  readonly server: RunningServer;
  readonly context: RclContext;
  readonly sim: SimContext;
  readonly standin: Standin;
  /** The graph sequence runners reach the stand-in through. */
  readonly graph: StandinGraph;
  /** The configuration the rclnodejs context and the server run with. */
  readonly config: Config;
  close(): Promise<void>;
}

export interface RclTestOptions {
  /** Settings of the simulator behind the stand-in (its own endpoints keep the default timeouts). */
  readonly sim?: SettingsOverrides;
  /** Timeouts of the rclnodejs context's endpoints file. */
  readonly timeouts?: Partial<EndpointsFile['timeouts']>;
  /** The SRDF from a node parameter (served by the stand-in) instead of the file. */
  readonly srdfFromNode?: boolean;
  /** Applied to the stand-in before the context is created (types not installed, ...). */
  readonly prepare?: (standin: Standin) => void;
  /**
   * One clock for the simulator behind the stand-in, the rclnodejs context (joint states' arrival, the waits, the
   * jog's period) and the app (tests/support/stepped.ts): the motion then takes the time of the clock the test steps,
   * however loaded the machine. Default: the process clock.
   */
  readonly clock?: SteppedClock;
}

/** Starts the simulator, the stand-in, the rclnodejs context and a server on 127.0.0.1:0. */
export async function startRclTestServer(options: RclTestOptions = {}): Promise<RclTestServer> {
  const simConfig = await testConfig(options.sim ?? {});
  const { clock } = options;
  const sim = await SimContext.create(simConfig, clock);
  const standin = createStandin(sim);
  options.prepare?.(standin);
  const srdfXml = await readFile(new URL('../../share/armgate/srdf/iiwa7.srdf', import.meta.url), 'utf8');
  const endpoints: EndpointsFile = {
    ...simConfig.endpoints,
    timeouts: { ...simConfig.endpoints.timeouts, ...options.timeouts },
    ...(options.srdfFromNode ? { srdf: { node: '/move_group', parameter: 'robot_description_semantic' } } : {}),
  };
  if (options.srdfFromNode)
    standin.knobs.srdf = { node: '/move_group', parameter: 'robot_description_semantic', xml: srdfXml };
  const own = await withOwnPositionsFile({
    ...simConfig,
    robot: { ...simConfig.robot, backend: 'ros2' },
    endpoints,
    groupStates: options.srdfFromNode ? undefined : simConfig.groupStates,
  });
  const config: Config = own.config;
  const context = await RclContext.create(config, standin.module, clock ? { clock } : {});
  const graph = await serveStandinGraph(standin.module, FIXTURE_AMENT_PREFIX);
  const server = await startServer(config, catalog, {
    context,
    log: () => undefined,
    runnerEnv: graph.env,
    ...(clock ? { clock } : {}),
  });
  return {
    url: server.url,
    server,
    context,
    sim,
    standin,
    graph,
    config,
    async close() {
      await server.close();
      await graph.close();
      // A call the context abandoned (a named motion after its timeout) may still be winding
      // down in the simulator: let it finish, or its goal timer outlives the test (on a stepped clock: step it).
      for (let i = 0; i < 100 && sim.armActivity(); i++)
        await (clock ? clock.advance(50) : new Promise((resolve) => setTimeout(resolve, 50)));
      await sim.close();
      await own.cleanup();
    },
  };
}
