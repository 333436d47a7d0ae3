import * as v from 'valibot';
import { defineOperation } from '../../lib/core/operation.ts';
import { restHandler } from '../../lib/http/rest.ts';

/** The answer of a resume. */
export const ResumeResultSchema = v.pipe(
  v.object({
    resumed: v.pipe(v.literal(true), v.description('The paused motion continues.')),
    message: v.pipe(v.string(), v.description('What continues, and at which override.')),
    what: v.pipe(v.string(), v.description('The motion that continues, in words.')),
  }),
  v.title('ResumeResult'),
);

/** POST /robot/resume: the paused motion continues on its path. */
export const operation = defineOperation({
  name: 'resume',
  summary: 'Resume the paused motion',
  description:
    'Continues the motion {op:pause} held, on the same path from where it rests, accelerating within the limits to the ' +
    'speed override in force ({op:set_override}); the request that started it then answers as it would have. A resume ' +
    'with nothing paused is a 409 saying so.',
  effect: 'motion',
  idempotent: false,
  output: ResumeResultSchema,
  errors: {
    busy: 'Nothing is paused.',
    unavailable: 'The backend cannot resume (see the documentation of the ros2 backend).',
  },
  rest: {
    method: 'POST',
    path: '/robot/resume',
    operationId: 'resumeMotion',
    tags: ['robot'],
    ok: 'The paused motion continues; its own request answers when it ends.',
  },
  mcp: { title: 'Resume' },
  needs: ['control'],
  run: (_input, ctx) => ctx.services.control.resume(),
});

/** POST /robot/resume */
export const handler = restHandler(operation);
