import * as v from 'valibot';
import { type ApiError, invalid, unavailable } from '../../lib/core/errors.ts';
import { intField, numberField } from '../../lib/http/schemas.ts';
import { DEFAULT_ACTIONS } from '../../lib/motion/vocabulary.ts';
import { defineOperation } from '../../lib/core/operation.ts';
import { perLimits } from '../../lib/robot/limits.ts';
import { restHandler } from '../../lib/http/rest.ts';
import { err, ok, type Result } from '../../lib/result.ts';
import { configProblem, namedPointsOf, resolveNamedPoints, sequenceConfigSchema } from '../../lib/sequences/config.ts';
import { findPosition } from '../../lib/ops/positions.ts';
import { confineRequest } from '../../lib/sequences/paths.ts';

const ROS_NAME = /^\/?[A-Za-z_][A-Za-z0-9_]*(\/[A-Za-z_][A-Za-z0-9_]*)*$/;
/** Largest configuration file accepted (1 MiB). */
export const MAX_CONFIG_BYTES = 1024 * 1024;

const rosName = (fallback: string, what: string) =>
  v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.maxLength(256, 'at most 256 characters'),
      v.regex(ROS_NAME, 'must be a ROS name such as cobot/move_to_joints'),
      v.description(what),
    ),
    fallback,
  );

/** Input of start_sequence: the configuration and the run's options. */
export const inputSchema = perLimits((limits) =>
  v.pipe(
    v.strictObject({
      config: sequenceConfigSchema(limits),
      n_iterations: intField(1, 100_000, 3, 'Iterations, at least 1. Default 3.'),
      delay_between_iterations: numberField(0, 3600, 5, 'Seconds between iterations, 0 to 3600. Default 5.0.'),
      bag_path: v.optional(
        v.pipe(
          v.string(),
          v.trim(),
          v.maxLength(256, 'at most 256 characters'),
          v.description('Bag folder under sequences.bag_root; empty: no recording.'),
        ),
        '',
      ),
      topics: v.optional(
        v.pipe(
          v.string(),
          v.maxLength(4096, 'at most 4096 characters'),
          v.description('Comma-separated topics to record; empty: every topic the stack offers.'),
        ),
        '',
      ),
      joints_action: rosName(DEFAULT_ACTIONS.joints, `Action for joint targets. Default ${DEFAULT_ACTIONS.joints}.`),
      pose_action: rosName(DEFAULT_ACTIONS.pose, `Action for Cartesian targets. Default ${DEFAULT_ACTIONS.pose}.`),
    }),
    v.title('SequenceStart'),
  ),
);

/** What start_sequence answers. */
export const StartedSchema = v.pipe(
  v.object({
    status: v.literal('started'),
    pid: v.pipe(v.number(), v.integer(), v.description('Process id of the runner.')),
    config: v.pipe(
      v.string(),
      v.description("Name of the uploaded configuration file ('config.json' when it has none; 'inline' over MCP)."),
    ),
  }),
  v.title('SequenceStarted'),
);

/** Starts a motion sequence in a runner process. */
export const operation = defineOperation({
  name: 'start_sequence',
  summary: 'Start a sequence from a JSON file',
  description:
    'Validates the configuration, then starts a motion sequence in a separate runner process: config {home: point, ' +
    'waypoints: [points]}, a point being {joints: [7 rad], speed?}, a named position {position: name, speed?} (of the ' +
    'robot description or taught with {op:save_position}; its angles as they are when the run starts) or a Cartesian ' +
    'target {x, y, z, a?, b?, c?, speed?, planner?, frame_id?, circ_center?, circ_interim?}. Each of n_iterations (default 3) runs home, the waypoints, home, then ' +
    'waits delay_between_iterations s (default 5). bag_path (under sequences.bag_root) records a rosbag. Answers at once ' +
    "with the runner's pid; follow it with {op:get_sequence_status} and {op:get_sequence_logs}; {op:stop} ends it. While " +
    'it runs, motions fail as busy and reads work.',
  effect: 'motion',
  idempotent: false,
  input: inputSchema,
  output: StartedSchema,
  errors: { busy: 'A sequence is already running, or a motion holds the arm.' },
  rest: {
    method: 'POST',
    path: '/sequences/start',
    operationId: 'startSequence',
    tags: ['sequences'],
    body: 'multipart',
    files: {
      config: {
        as: 'json',
        description: 'The sequence configuration, a JSON file: {"home": point, "waypoints": [point, ...]}.',
        maxBytes: MAX_CONFIG_BYTES,
      },
    },
    ok: 'The runner started.',
    example: {
      config: JSON.stringify({
        home: { joints: [0, 0, 0, -1.57, 0, 1.57, 0], speed: 0.2 },
        waypoints: [{ joints: [0.3, 0, 0, -1.57, 0, 1.57, 0], speed: 0.2 }],
      }),
      n_iterations: 1,
      delay_between_iterations: 0,
    },
  },
  mcp: { title: 'Start a motion sequence' },
  needs: ['sequences', 'arbiter', 'bagRoot', 'positions'],
  run: async (f, ctx): Promise<Result<v.InferOutput<typeof StartedSchema>, ApiError>> => {
    const context = ctx.ros;
    const { sequences, arbiter, bagRoot } = ctx.services;
    // Named points become joint targets now: the run goes to the positions as they are when it starts.
    const joints = new Map<string, readonly number[]>();
    let known: readonly string[] = [];
    for (const name of namedPointsOf(f.config)) {
      const looked = await findPosition(ctx, name);
      if (!looked.ok) return err(unavailable(looked.error));
      known = looked.value.known;
      if (looked.value.found) joints.set(name, looked.value.found.jointsRad);
    }
    const resolved = resolveNamedPoints(f.config, joints, known);
    if (!resolved.ok) return err(invalid(['body', 'config', ...resolved.path], resolved.message));
    const config = resolved.value;
    const problem = configProblem(config, context.endpoints.planning_frame);
    if (problem) return err(invalid(['body', 'config', ...problem.path], problem.message));
    let bagPath: string | undefined;
    if (f.bag_path !== '') {
      const confined = await confineRequest(bagRoot, f.bag_path);
      if (!confined.ok) return err(invalid(['body', 'bag_path'], confined.error));
      bagPath = confined.value;
    }
    const topics = f.topics
      .split(',')
      .map((t) => t.trim())
      .filter((t) => t.length > 0);
    const offered = context.topics().map((t) => t.name);
    const unknown = topics.filter((t) => !offered.includes(t));
    if (unknown.length > 0)
      return err(
        invalid(['body', 'topics'], `unknown topic(s) ${unknown.join(', ')}; this stack offers ${offered.join(', ')}`),
      );
    // Taken synchronously: of simultaneous starts exactly one gets the arm; the runner keeps it until it exits.
    const lease = arbiter.acquire('sequence', 'a motion sequence is starting', [], ctx.arrivedAtStop);
    if (!lease.ok) return err(lease.error);
    const run = {
      iterations: f.n_iterations,
      delayS: f.delay_between_iterations,
      bagPath,
      bagRoot,
      topics,
      jointsAction: f.joints_action,
      poseAction: f.pose_action,
    };
    const started = await sequences.start(config, run, lease.value);
    if (!started.ok) return err({ kind: 'busy', detail: started.error });
    // An uploaded configuration is named by its file (config.json when the upload has no name); one given inline
    // (as the MCP tool's argument: no file) is 'inline'.
    const uploaded = ctx.filenames?.config;
    const name = uploaded === undefined ? 'inline' : uploaded || 'config.json';
    return ok({ status: 'started', pid: started.value, config: name });
  },
});

/** POST /sequences/start */
export const handler = restHandler(operation);
