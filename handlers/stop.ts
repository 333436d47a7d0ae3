import * as v from 'valibot';
import { services } from '../lib/app/services.ts';
import { json } from '../lib/http/errors.ts';
import type { RouteSpec } from '../lib/http/route-spec.ts';
import { ros } from '../lib/ros/context.ts';
import { durationFromS } from '../lib/ros/messages.ts';

/** Response of POST /stop. */
export const StopResultSchema = v.pipe(
  v.object({
    message: v.pipe(v.string(), v.description('What was stopped, in one sentence.')),
    sequence_stopped: v.pipe(v.boolean(), v.description('A sequence runner was running and has been ended.')),
    hold_published: v.pipe(
      v.boolean(),
      v.description('A hold point (or an empty trajectory) reached the controller topic.'),
    ),
    planner_stopped: v.pipe(v.boolean(), v.description("The planner's stop service (cobot/stop) answered success.")),
  }),
  v.title('StopResult'),
);

export const route = {
  method: 'POST',
  path: '/stop',
  operationId: 'stop',
  summary: 'Stop API commands and the planner',
  description:
    'In order: (1) takes the arm from whatever holds it (a move, a trajectory request, a sequence), (2) publishes a hold point at the current position to the ' +
    "trajectory controller (an empty trajectory when no joint state is available), (3) calls the planner's stop service, (4) ends every sequence runner still " +
    'alive (stop message, SIGTERM, SIGKILL after 3 s) and answers once they have exited. Always 200. A move request waiting on a stopped motion answers ' +
    "success false 'stopped'. Software stop only: it does not replace the robot's emergency stop.",
  tags: ['stop'],
  responses: { 200: { description: 'What was stopped.', schema: StopResultSchema } },
} as const satisfies RouteSpec;

/** POST /stop */
export async function handler(_request: Request): Promise<Response> {
  const context = ros();
  const { arbiter, sequences, trajectoryLog } = services();
  // First, synchronously: whatever holds the arm loses it (its goal is cancelled, a runner's goals refused).
  const revoked = arbiter.revoke('stopped');
  const latest = context.latestJointState();
  const fresh = latest && context.nowMs() - latest.receivedAtMs <= 500 ? latest.msg : undefined;
  const names = [...context.endpoints.joint_names];
  const order = fresh ? names.map((n) => fresh.name.indexOf(n)) : [];
  const positions = fresh && order.every((i) => i >= 0) ? order.map((i) => fresh.position[i] ?? 0) : undefined;
  const published = await context.publishTrajectory({
    header: { stamp: { sec: 0, nanosec: 0 }, frame_id: '' },
    joint_names: names,
    points: positions
      ? [
          {
            positions,
            velocities: names.map(() => 0),
            accelerations: [],
            effort: [],
            time_from_start: durationFromS(0),
          },
        ]
      : [],
  });
  trajectoryLog.push(
    `stop: ${positions ? 'hold point at the current position' : 'empty trajectory (no current joint state)'} ${published.ok ? 'published' : `not published: ${published.error.message}`}`,
  );
  const planner = await context.callStop();
  const plannerStopped = planner.ok && planner.value.success;
  // Then every runner still alive is ended (the arm is already held; this waits for their exit).
  const sequenceStopped = await sequences.stop();
  if (revoked) trajectoryLog.push(`stop: revoked the arm from ${revoked.detail}`);
  const parts = [
    sequenceStopped ? 'sequence runner stopped' : 'no sequence was running',
    published.ok
      ? positions
        ? 'hold point published'
        : 'empty trajectory published (no joint state)'
      : 'hold not published',
    plannerStopped
      ? 'planner stopped'
      : `planner stop failed${planner.ok ? `: ${planner.value.message}` : `: ${planner.error.message}`}`,
  ];
  return json({
    message: parts.join('; '),
    sequence_stopped: sequenceStopped,
    hold_published: published.ok,
    planner_stopped: plannerStopped,
  });
}
