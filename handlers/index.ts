import type { AnyOperation } from '../lib/ops/operation.ts';
import type { RestHandler } from '../lib/ops/rest.ts';
import * as executePlan from './robot/execute-plan.ts';
import * as ik from './robot/ik.ts';
import * as jointStates from './robot/joint-states.ts';
import * as moveJoints from './robot/move-joints.ts';
import * as moveNamed from './robot/move-named.ts';
import * as movePose from './robot/move-pose.ts';
import * as pose from './robot/pose.ts';
import * as positions from './robot/positions.ts';
import * as safety from './robot/safety.ts';
import * as robotStop from './robot/stop.ts';
import * as sequenceLogs from './sequences/logs.ts';
import * as startSequence from './sequences/start.ts';
import * as sequenceStatus from './sequences/status.ts';
import * as stop from './stop.ts';
import * as trajectoryLogs from './trajectory/logs.ts';
import * as sendTrajectory from './trajectory/send.ts';
import * as sendTrajectoryCsv from './trajectory/send-csv.ts';

/** A handler file: its operation and the operation's REST face. */
export interface HandlerModule {
  readonly operation: AnyOperation;
  readonly handler: RestHandler;
}

/** Every operation, in the order of the spec's overview of its REST endpoints. */
export const handlers: readonly HandlerModule[] = [
  jointStates,
  pose,
  positions,
  moveNamed,
  movePose,
  moveJoints,
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
];
