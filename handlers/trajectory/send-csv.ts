import * as v from 'valibot';
import { boolField } from '../../lib/http/schemas.ts';
import { defineOperation, type Upload } from '../../lib/core/operation.ts';
import { restHandler } from '../../lib/http/rest.ts';
import { giveBackUploadBuffer } from '../../lib/body/upload-pool.ts';
import { checkAndPublish, TRAJECTORY_NEEDS } from '../../lib/ops/trajectory-request.ts';
import { SentSchema, TRAJECTORY_ERRORS } from './send.ts';

/** Input of POST /trajectory/send_csv: the uploaded file, and the query's separator and validate_limits. */
export const inputSchema = v.pipe(
  v.strictObject({
    file: v.custom<Upload>(
      (input) => typeof input === 'object' && input !== null && (input as Upload).bytes instanceof Uint8Array,
      "Field required: upload the CSV as the multipart part 'file'",
    ),
    separator: v.optional(
      v.pipe(
        v.string(),
        // The two characters \t mean a tab, as the robot stack read them.
        v.transform((s) => (s === '\\t' ? '\t' : s)),
        v.length(1, 'must be exactly one character (a semicolon is passed as %3B, a tab as \\t or %09)'),
        v.check((c) => !['\r', '\n', '"'].includes(c), 'must not be a line break or a double quote'),
        v.description(
          'The column separator, one character. Default comma; a semicolon is passed as %3B, a tab as \\t or %09.',
        ),
      ),
      ',',
    ),
    validate_limits: boolField(true, 'Check every point against the joint limits file. Default true.'),
    wait: boolField(
      false,
      "Answer with the controller's outcome instead of at publication, as send_trajectory. Default false.",
    ),
  }),
  v.title('TrajectoryCsvUpload'),
);

/** The answer: as send_trajectory's, plus the uploaded file's name. */
export const SentCsvSchema = v.pipe(
  v.object({
    ...SentSchema.entries,
    file: v.pipe(v.string(), v.description('Name of the uploaded file.')),
    filename: v.pipe(v.string(), v.description("The same name, under the robot stack's key.")),
    ignored_columns: v.optional(
      v.pipe(
        v.array(v.string()),
        v.description(
          'Header columns that are neither a joint nor the time, ignored (present only when there are any).',
        ),
      ),
    ),
  }),
  v.title('TrajectoryCsvSent'),
);

/** Publishes a joint trajectory given as a CSV file (REST only). */
export const operation = defineOperation({
  name: 'send_trajectory_csv',
  summary: 'Publish a trajectory from CSV',
  description:
    'As {op:send_trajectory}, from an uploaded CSV file (multipart part `file`, at most 10 MiB, at most 100,000 rows, times ' +
    '0..86400 s, angles within +-2 pi): a header row with joint1..joint7 (or joint_1..joint_7, any case) and t, time or ' +
    'time_from_start, in any order; one row per point. Errors name the row and column.',
  effect: 'motion',
  idempotent: false,
  input: inputSchema,
  output: SentCsvSchema,
  errors: TRAJECTORY_ERRORS,
  rest: {
    method: 'POST',
    path: '/trajectory/send_csv',
    operationId: 'sendTrajectoryCsv',
    tags: ['trajectory'],
    body: 'multipart',
    query: ['separator', 'validate_limits', 'wait'],
    files: { file: { as: 'upload', description: 'The CSV file.' } },
    ok: 'Published.',
    example: {
      file: 't,joint1,joint2,joint3,joint4,joint5,joint6,joint7\n2,0.2,0,0,-1.57,0,1.57,0\n4,0,0,0,-1.57,0,1.57,0\n',
    },
  },
  needs: TRAJECTORY_NEEDS,
  run: async ({ file, separator, validate_limits, wait }, ctx) => {
    try {
      return await checkAndPublish(
        { kind: 'csv', bytes: file.bytes, separator, validateLimits: validate_limits, wait },
        [file.bytes.buffer as ArrayBuffer],
        `POST /trajectory/send_csv (${file.filename})`,
        { file: file.filename },
        ctx,
      );
    } finally {
      // Refused before the check (409): the buffer goes to the next upload. Checked: it went to the checker's thread,
      // which sends it back with its answer (lib/trajectory/worker-pool.ts); detached here, nothing is given back.
      giveBackUploadBuffer(file.bytes);
    }
  },
});

/** POST /trajectory/send_csv */
export const handler = restHandler(operation);
