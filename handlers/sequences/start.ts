import * as v from 'valibot';
import { services } from '../../lib/app/services.ts';
import { errorResponse, fromValibot, invalid, json } from '../../lib/http/errors.ts';
import { parseMultipart } from '../../lib/http/multipart.ts';
import type { RouteSpec } from '../../lib/http/route-spec.ts';
import { ErrorDetailSchema } from '../../lib/http/schemas.ts';
import { ros } from '../../lib/ros/context.ts';
import { sequenceConfigSchema } from '../../lib/sequences/config.ts';
import { confineRequest } from '../../lib/sequences/paths.ts';

const ROS_NAME = /^\/?[A-Za-z_][A-Za-z0-9_]*(\/[A-Za-z_][A-Za-z0-9_]*)*$/;
/** Largest configuration file accepted (1 MiB). */
export const MAX_CONFIG_BYTES = 1024 * 1024;

// Form fields arrive as text; their documented (JSON) type is in metadata.openapi.
const intField = (min: number, max: number, fallback: number, what: string) =>
  v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.regex(/^\d{1,9}$/, `must be an integer from ${min} to ${max}`),
      v.transform(Number),
      v.number(),
      v.minValue(min, `must be at least ${min}`),
      v.maxValue(max, `must be at most ${max}`),
      v.description(what),
      v.metadata({ openapi: { type: 'integer', minimum: min, maximum: max, default: fallback } }),
    ),
    String(fallback),
  );
const numberField = (min: number, max: number, fallback: number, what: string) =>
  v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.regex(/^\d+(\.\d+)?$/, `must be a number from ${min} to ${max}`),
      v.transform(Number),
      v.number(),
      v.finite(),
      v.minValue(min, `must be at least ${min}`),
      v.maxValue(max, `must be at most ${max}`),
      v.description(what),
      v.metadata({ openapi: { type: 'number', minimum: min, maximum: max, default: fallback } }),
    ),
    String(fallback),
  );
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

/** The form fields of POST /sequences/start besides the config file. */
export const fieldsSchema = v.strictObject({
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
  joints_action: rosName('cobot/move_to_joints', 'Action for joint targets. Default cobot/move_to_joints.'),
  pose_action: rosName('cobot/move_to_pose', 'Action for Cartesian targets. Default cobot/move_to_pose.'),
});

/** Body of POST /sequences/start (multipart form). */
export const bodySchema = v.pipe(
  v.object({
    config: v.pipe(
      v.string(),
      v.description('The sequence configuration, a JSON file: {"home": point, "waypoints": [point, ...]}.'),
      v.metadata({ openapi: { type: 'string', format: 'binary' } }),
    ),
    ...fieldsSchema.entries,
  }),
  v.title('SequenceStart'),
);

/** Response of POST /sequences/start. */
export const StartedSchema = v.pipe(
  v.object({ status: v.literal('started'), pid: v.pipe(v.number(), v.description('Process id of the runner.')) }),
  v.title('SequenceStarted'),
);

export const route = {
  method: 'POST',
  path: '/sequences/start',
  operationId: 'startSequence',
  summary: 'Start a sequence from a JSON file',
  description:
    "Validates the configuration, then starts the motion_sequence_runner process. 'started' confirms the process started; follow it with " +
    'GET /sequences/status and GET /sequences/logs. While it runs, motion requests get 409 and reads work.',
  tags: ['sequences'],
  body: { contentType: 'multipart/form-data', schema: bodySchema },
  responses: {
    200: { description: 'The runner started.', schema: StartedSchema },
    409: { description: 'A sequence is already running, or a motion holds the arm.', schema: ErrorDetailSchema },
  },
} as const satisfies RouteSpec;

/** POST /sequences/start */
export async function handler(request: Request): Promise<Response> {
  const form = await parseMultipart(request, {
    fileParts: ['config'],
    fieldParts: Object.keys(fieldsSchema.entries),
    maxFileBytes: MAX_CONFIG_BYTES,
  });
  if (!form.ok) return errorResponse(form.error);
  const file = form.value.files.config;
  if (!file)
    return errorResponse(
      invalid(
        ['body', 'config'],
        "Field required: upload the JSON configuration as the multipart part 'config'",
        'missing',
      ),
    );
  const fields = v.safeParse(fieldsSchema, form.value.fields);
  if (!fields.success) return errorResponse(fromValibot('body', fields.issues));
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(file.data));
  } catch (e) {
    return errorResponse(
      invalid(['body', 'config'], `the configuration is not valid JSON: ${(e as Error).message}`, 'json_invalid'),
    );
  }
  const context = ros();
  const config = v.safeParse(sequenceConfigSchema(context.limits), doc);
  if (!config.success) return errorResponse(fromValibot(['body', 'config'], config.issues));
  const f = fields.output;
  const { sequences, arbiter, bagRoot } = services();
  let bagPath: string | undefined;
  if (f.bag_path !== '') {
    const confined = await confineRequest(bagRoot, f.bag_path);
    if (!confined.ok) return errorResponse(invalid(['body', 'bag_path'], confined.error));
    bagPath = confined.value;
  }
  const topics = f.topics
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t.length > 0);
  const offered = context.topics().map((t) => t.name);
  const unknown = topics.filter((t) => !offered.includes(t));
  if (unknown.length > 0)
    return errorResponse(
      invalid(['body', 'topics'], `unknown topic(s) ${unknown.join(', ')}; this stack offers ${offered.join(', ')}`),
    );
  // Taken synchronously: of simultaneous starts exactly one gets the arm; the runner keeps it until it exits.
  const lease = arbiter.acquire('sequence', 'a motion sequence is starting');
  if (!lease.ok) return errorResponse({ kind: 'busy', detail: lease.error });
  const run = {
    iterations: f.n_iterations,
    delayS: f.delay_between_iterations,
    bagPath,
    bagRoot,
    topics,
    jointsAction: f.joints_action,
    poseAction: f.pose_action,
  };
  const started = await sequences.start(config.output, run, lease.value);
  if (!started.ok) return errorResponse({ kind: 'busy', detail: started.error });
  return json({ status: 'started', pid: started.value });
}
