/**
 * The words of a jog, shared by its faces (POST /robot/jog, the jog WebSocket, POST /robot/jog/step and the MCP tool
 * `jog`): the input schemas with every field bounded, the answers, and the jog target an input asks for.
 */
import * as v from 'valibot';
import type { JogTarget } from '../motion/jog.ts';
import type { JogStepGoal } from '../motion/jog.ts';
import { perLimits } from '../robot/limits.ts';

const fraction = v.pipe(
  v.number('expected a number in [-1, 1]'),
  v.finite('expected a finite number in [-1, 1]'),
  v.minValue(-1, 'expected a number in [-1, 1]'),
  v.maxValue(1, 'expected a number in [-1, 1]'),
);

const triple = (what: string) =>
  v.optional(
    v.pipe(
      v.array(fraction, `expected [x, y, z]: ${what}`),
      v.length(3, `expected 3 numbers [x, y, z]: ${what}`),
      v.description(`${what}: each a fraction in [-1, 1]; left out: zeros.`),
    ),
  );

/** Fewest and most milliseconds a command may hold. */
export const JOG_TTL_MIN_MS = 20;
export const JOG_TTL_MAX_MS = 500;

/** The body of a jog command: exactly one of `joints` or `linear`/`angular` (with `frame`), and `ttl_ms`. */
export const jogCommandSchema = perLimits((limits) => {
  const n = limits.jointNames.length;
  return v.pipe(
    v.strictObject({
      joints: v.optional(
        v.pipe(
          v.array(fraction, `expected ${n} fractions`),
          v.length(n, `expected exactly ${n} fractions, one per joint`),
          v.description(
            `Joint velocities J1..J${n}, each a fraction in [-1, 1] of the joint's jog speed (armgate.jog.joint_speed of its velocity limit).`,
          ),
        ),
      ),
      linear: triple('TCP velocity as fractions of armgate.jog.tcp_speed (m/s) along the frame axes'),
      angular: triple(
        'TCP angular velocity as fractions of armgate.jog.tcp_angular_speed (rad/s) about the frame axes',
      ),
      frame: v.optional(
        v.pipe(
          v.picklist(['base', 'tool'], "expected 'base' or 'tool'"),
          v.description("The axes of linear and angular: 'base' (the planning frame, default) or 'tool' (the TCP's)."),
        ),
      ),
      ttl_ms: v.optional(
        v.pipe(
          v.number('expected milliseconds'),
          v.integer('expected whole milliseconds'),
          v.minValue(JOG_TTL_MIN_MS, `expected ${JOG_TTL_MIN_MS}..${JOG_TTL_MAX_MS} ms`),
          v.maxValue(JOG_TTL_MAX_MS, `expected ${JOG_TTL_MIN_MS}..${JOG_TTL_MAX_MS} ms`),
          v.description(
            'How long this command holds (the dead-man): without a newer command by then, the arm brakes to rest. Default armgate.jog.ttl_ms.',
          ),
        ),
      ),
    }),
    v.forward(
      v.partialCheck(
        [['joints'], ['linear'], ['angular']],
        (input) => (input.joints === undefined) !== (input.linear === undefined && input.angular === undefined),
        'give exactly one of joints, or linear and/or angular',
      ),
      ['joints'],
    ),
    v.forward(
      v.partialCheck(
        [['joints'], ['frame']],
        (input) => input.joints === undefined || input.frame === undefined,
        'frame goes with linear and angular, not with joints',
      ),
      ['frame'],
    ),
    v.title('JogRequest'),
  );
});

/** A jog command as validated. */
export type JogCommandInput = v.InferOutput<ReturnType<typeof jogCommandSchema>>;

/** The jog target of a validated command. */
export function jogTargetOf(input: JogCommandInput): JogTarget {
  if (input.joints) return { kind: 'joints', fractions: input.joints };
  return {
    kind: 'cartesian',
    linear: input.linear ?? [0, 0, 0],
    angular: input.angular ?? [0, 0, 0],
    frame: input.frame ?? 'base',
  };
}

/** The limit holding a jog back. */
const JogLimitSchema = v.pipe(
  v.nullable(
    v.object({
      kind: v.pipe(
        v.picklist(['joint_limit', 'workspace', 'keep_out', 'singularity', 'collision']),
        v.description('What holds the jog back.'),
      ),
      detail: v.pipe(v.string(), v.description('The same, in a sentence.')),
    }),
  ),
  v.description('What holds the jog back now (it slows or stops there); null when nothing does.'),
);

/** The answer to a jog command. */
export const JogAnswerSchema = v.pipe(
  v.object({
    success: v.pipe(v.literal(true), v.description('The command was taken.')),
    jogging: v.pipe(
      v.boolean(),
      v.description('A jog is in force after it (false: an all-zero command: the arm brakes to rest).'),
    ),
    message: v.pipe(v.string(), v.description('What the jog does, in one sentence.')),
    limit: JogLimitSchema,
  }),
  v.title('JogAnswer'),
);

/** Largest joint step (rad), linear step (m) and angular step (rad) of one jog step. */
export const STEP_MAX_JOINT_RAD = 0.2;
export const STEP_MAX_LINEAR_M = 0.05;
export const STEP_MAX_ANGULAR_RAD = 0.2;

const AXES = ['x', 'y', 'z', 'a', 'b', 'c'] as const;

/** One bounded jog step: a joint by `delta` rad, or the TCP along or about one axis by `delta` m or rad. */
export const jogStepSchema = perLimits((limits) => {
  const n = limits.jointNames.length;
  return v.pipe(
    v.strictObject({
      joint: v.optional(
        v.pipe(
          v.number('expected a joint number'),
          v.integer(`expected a joint number 1..${n}`),
          v.minValue(1, `expected a joint number 1..${n}`),
          v.maxValue(n, `expected a joint number 1..${n}`),
          v.description(`The joint to step, 1..${n} (with delta in rad).`),
        ),
      ),
      axis: v.optional(
        v.pipe(
          v.picklist(AXES, 'expected x, y, z (along, m) or a, b, c (about, rad)'),
          v.description('The TCP axis to step along (x, y, z: delta in m) or about (a, b, c: delta in rad).'),
        ),
      ),
      delta: v.pipe(
        v.number('expected a number'),
        v.finite('expected a finite number'),
        v.minValue(-STEP_MAX_JOINT_RAD, `expected |delta| <= ${STEP_MAX_JOINT_RAD}`),
        v.maxValue(STEP_MAX_JOINT_RAD, `expected |delta| <= ${STEP_MAX_JOINT_RAD}`),
        v.check((d) => d !== 0, 'expected a step other than 0'),
        v.description(
          `How far: rad for a joint (|delta| <= ${STEP_MAX_JOINT_RAD}), m along x, y, z (<= ${STEP_MAX_LINEAR_M}), rad about a, b, c (<= ${STEP_MAX_ANGULAR_RAD}).`,
        ),
      ),
      frame: v.optional(
        v.pipe(
          v.picklist(['base', 'tool'], "expected 'base' or 'tool'"),
          v.description("The axes of a TCP step: 'base' (default) or 'tool'."),
        ),
      ),
    }),
    v.forward(
      v.partialCheck(
        [['joint'], ['axis']],
        (input) => (input.joint === undefined) !== (input.axis === undefined),
        'give exactly one of joint or axis',
      ),
      ['joint'],
    ),
    v.forward(
      v.partialCheck(
        [['joint'], ['axis'], ['delta']],
        (input) => Math.abs(input.delta) <= stepBound(input),
        'the step is larger than a jog step may be',
      ),
      ['delta'],
    ),
    v.forward(
      v.partialCheck(
        [['joint'], ['frame']],
        (input) => input.joint === undefined || input.frame === undefined,
        'frame goes with axis, not with joint',
      ),
      ['frame'],
    ),
    v.title('JogStepRequest'),
  );
});

function stepBound(input: { readonly joint?: number | undefined; readonly axis?: string | undefined }): number {
  if (input.joint !== undefined) return STEP_MAX_JOINT_RAD;
  return ['x', 'y', 'z'].includes(input.axis ?? 'x') ? STEP_MAX_LINEAR_M : STEP_MAX_ANGULAR_RAD;
}

/** A jog step as validated. */
export type JogStepInput = v.InferOutput<ReturnType<typeof jogStepSchema>>;

/** The jog target and goal of a validated step (n joints). */
export function jogStepOf(input: JogStepInput, n: number): { target: JogTarget; goal: JogStepGoal } {
  const sign = Math.sign(input.delta);
  const goal = { amount: Math.abs(input.delta) };
  if (input.joint !== undefined) {
    const fractions = new Array<number>(n).fill(0);
    fractions[input.joint - 1] = sign;
    return { target: { kind: 'joints', fractions }, goal };
  }
  const index = AXES.indexOf(input.axis ?? 'x');
  const linear = [0, 0, 0];
  const angular = [0, 0, 0];
  if (index < 3) linear[index] = sign;
  else angular[index - 3] = sign;
  return { target: { kind: 'cartesian', linear, angular, frame: input.frame ?? 'base' }, goal };
}

/** The answer of a jog step. */
export const JogStepResultSchema = v.pipe(
  v.object({
    success: v.pipe(
      v.boolean(),
      v.description('true: the step was made in full. false: a limit or a stop ended it short; the arm is at rest.'),
    ),
    message: v.pipe(v.string(), v.description('What happened, in one sentence.')),
    reason: v.pipe(
      v.picklist(['released', 'ttl', 'socket closed', 'stop', 'limit']),
      v.description(
        "Why the step ended: 'released' (made in full; with success false, released first by another command of the same client: an all-zero jog command or a newer step), 'limit' or 'stop'.",
      ),
    ),
    joints: v.pipe(v.array(v.number()), v.description('The joint positions at rest after the step (rad, J1..J7).')),
    limit: JogLimitSchema,
  }),
  v.title('JogStepResult'),
);
