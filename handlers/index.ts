import type { AnyOperation, Catalog, HandlerFile, RestOperation } from '../lib/core/operation.ts';
import type { RestHandler } from '../lib/http/rest.ts';
import * as executePlan from './robot/execute-plan.ts';
import * as ik from './robot/ik.ts';
import * as jog from './robot/jog.ts';
import * as jogSocket from './robot/jog-socket.ts';
import * as jogStep from './robot/jog-step.ts';
import * as jointStates from './robot/joint-states.ts';
import * as moveJoints from './robot/move-joints.ts';
import * as moveNamed from './robot/move-named.ts';
import * as movePose from './robot/move-pose.ts';
import * as pose from './robot/pose.ts';
import * as positions from './robot/positions.ts';
import * as savePosition from './robot/save-position.ts';
import * as deletePosition from './robot/delete-position.ts';
import { resources } from './resources.ts';
import * as safety from './robot/safety.ts';
import * as getOverride from './robot/override.ts';
import * as pause from './robot/pause.ts';
import * as resume from './robot/resume.ts';
import * as setOverride from './robot/set-override.ts';
import * as robotStop from './robot/stop.ts';
import * as sequenceLogs from './sequences/logs.ts';
import * as startSequence from './sequences/start.ts';
import * as sequenceStatus from './sequences/status.ts';
import * as stop from './stop.ts';
import * as trajectoryLogs from './trajectory/logs.ts';
import * as sendTrajectory from './trajectory/send.ts';
import * as sendTrajectoryCsv from './trajectory/send-csv.ts';

/** A handler file: its operation and the operation's REST face (its standalone fetch handler), which is served. */
export interface HandlerModule extends HandlerFile {
  readonly operation: RestOperation;
  readonly handler: RestHandler;
}

/** A handler file whose operation has a route. */
function served(file: { readonly operation: AnyOperation; readonly handler: RestHandler }): HandlerModule {
  if (!file.operation.rest) throw new Error(`handler file of ${file.operation.name} has no route`);
  return file as HandlerModule;
}

/** Every handler file, in the order of the spec's overview of its REST endpoints. */
export const handlers: readonly HandlerModule[] = [
  jointStates,
  pose,
  positions,
  savePosition,
  deletePosition,
  moveNamed,
  movePose,
  moveJoints,
  jog,
  jogStep,
  ik,
  executePlan,
  safety,
  sendTrajectory,
  sendTrajectoryCsv,
  trajectoryLogs,
  startSequence,
  sequenceStatus,
  sequenceLogs,
  stop,
  robotStop,
  pause,
  resume,
  getOverride,
  setOverride,
].map(served);

/** Every operation, in the same order: what start-up hands the faces. */
export const operations: readonly RestOperation[] = handlers.map((h) => h.operation);

/** The WebSocket routes' files (each served while its operation's route is). */
export const websockets = [jogSocket.websocket];

/**
 * What start-up serves (server.ts hands it to lib/server/start.ts): the operations, their files, the MCP resources,
 * stop and the WebSocket routes.
 */
export const catalog: Catalog = { operations, files: handlers, resources, stop: stop.operation, websockets };
