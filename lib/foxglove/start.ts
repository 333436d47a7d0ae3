/**
 * Start-up of the Foxglove face (when the settings' foxglove.enabled is true): the hub of channels, the feeds that
 * fill it, and the server over them. One more face over the same operations and services as REST and MCP.
 */
import { invoke } from '../core/invoke.ts';
import type { AnyOperation, AppState } from '../core/operation.ts';
import type { Principal } from '../core/roles.ts';
import { admissionPolicy } from '../admission/front-door.ts';
import type { Config } from '../settings/load.ts';
import { channelDefs, type FeedSources, type ShownPosition, startFeeds } from './feeds.ts';
import { ChannelHub } from './hub.ts';
import { type RunningFoxglove, startFoxglove } from './server.ts';

export type { RunningFoxglove };

/** The running Foxglove face: the server and its feeds (`refreshPositions`: the teach work's seam). */
export interface FoxgloveFace extends RunningFoxglove {
  readonly hub: ChannelHub;
  refreshPositions(): Promise<void>;
}

/** Starts the Foxglove face of an app; `config.foxglove` must be set. */
export async function startFoxgloveFace(
  config: Config,
  state: AppState,
  operations: readonly AnyOperation[],
  log: (fields: Record<string, string | number>) => void,
  positions?: FeedSources['positions'],
): Promise<FoxgloveFace> {
  const settings = config.foxglove;
  if (!settings) throw new Error('foxglove is not enabled');
  const context = state.ros;
  // ros2: the stack's own URDF when it answers (the frames of its tf), else the endpoints file's (the simulator's).
  const stack = await context.robotDescription?.();
  const robotDescriptionXml = stack?.ok ? stack.value : config.robotDescriptionXml;
  const hub = new ChannelHub(channelDefs(context), settings.topicWhitelist);
  const listed = operations.find((op) => op.name === 'list_named_positions');
  const readPositions = positions ?? (listed ? () => positionsOf(listed, state) : undefined);
  const feeds = startFeeds(hub, {
    context,
    services: state.services,
    robotDescriptionXml,
    ...(readPositions ? { positions: readPositions } : {}),
  });
  let server: RunningFoxglove;
  try {
    server = await startFoxglove({
      config: settings,
      tokens: config.web.tokens,
      // The HTTP face's rules on the Foxglove address: loopback names, foxglove.address, web.allowed_hosts; the
      // same CORS origins.
      admission: admissionPolicy({
        host: settings.host,
        allowedHosts: config.web.allowedHosts,
        corsOrigins: config.web.corsOrigins,
      }),
      hub,
      operations,
      state,
      log,
      parameters: () => ({
        'armgate.backend': config.robot.backend,
        'armgate.planning_group': context.endpoints.planning_group,
        'armgate.planning_frame': context.endpoints.planning_frame,
        'armgate.tcp_link': context.endpoints.tcp_link,
        'armgate.joint_names': [...context.endpoints.joint_names],
        'armgate.override_percent': state.services.control.overridePercent(),
      }),
    });
  } catch (e) {
    feeds.close();
    throw e;
  }
  return {
    ...server,
    url: server.url,
    port: server.port,
    clientCount: server.clientCount,
    counts: server.counts,
    hub,
    refreshPositions: feeds.refreshPositions,
    async close() {
      feeds.close();
      await server.close();
    },
  };
}

/** Who reads the positions for /armgate/positions: the face itself, with the weakest role (a read). */
const FEED_READER: Principal = { name: 'foxglove-feed', role: 'read' };

/**
 * The positions GET /robot/positions lists (the same operation, through the pipeline): the SRDF's named positions and,
 * with the teach work, the taught ones (`source: taught`).
 */
async function positionsOf(op: AnyOperation, state: AppState): Promise<readonly ShownPosition[]> {
  const result = await invoke(
    op,
    {},
    {
      ...state,
      caller: FEED_READER,
      face: 'foxglove',
      calledAs: 'the /armgate/positions channel',
      arrivedAtStop: undefined,
    },
  );
  if (!result.ok || !Array.isArray(result.value)) return [];
  const names = state.ros.endpoints.joint_names;
  return result.value.map((p: { name: string; joints: Record<string, number>; source?: string }) => ({
    name: p.name,
    jointsRad: names.map((joint) => p.joints[joint] ?? 0),
    kind: p.source === 'taught' ? 'taught' : 'named',
  }));
}
