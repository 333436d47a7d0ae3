import * as v from 'valibot';
import { parseQuery } from '../../lib/http/body.ts';
import { errorResponse, invalid } from '../../lib/http/errors.ts';
import { parseMultipart } from '../../lib/http/multipart.ts';
import type { RouteSpec } from '../../lib/http/route-spec.ts';
import { ErrorDetailSchema, queryBool } from '../../lib/http/schemas.ts';
import { checkAndPublish } from '../../lib/trajectory/request.ts';
import { SentSchema } from './send.ts';

/** Query of POST /trajectory/send_csv (query parameters, not form fields). */
export const querySchema = v.strictObject({
  separator: v.optional(
    v.pipe(
      v.string(),
      v.length(1, 'must be exactly one character (a semicolon is passed as %3B)'),
      v.check((c) => !['\r', '\n', '"'].includes(c), 'must not be a line break or a double quote'),
      v.description('The column separator, one character. Default comma; a semicolon is passed as %3B.'),
    ),
    ',',
  ),
  validate_limits: queryBool(true, 'Check every point against the joint limits file. Default true.'),
});

/** Body of POST /trajectory/send_csv. */
export const bodySchema = v.pipe(
  v.object({
    file: v.pipe(
      v.string(),
      v.description(
        'CSV file: header row with joint1..joint7 (or joint_1..joint_7, any case) and t, time or time_from_start, any order; one row per point.',
      ),
      v.metadata({ openapi: { type: 'string', format: 'binary' } }),
    ),
  }),
  v.title('TrajectoryCsvUpload'),
);

/** The response: as /trajectory/send, plus the uploaded file's name. */
export const SentCsvSchema = v.pipe(
  v.object({ ...SentSchema.entries, file: v.pipe(v.string(), v.description('Name of the uploaded file.')) }),
  v.title('TrajectoryCsvSent'),
);

export const route = {
  method: 'POST',
  path: '/trajectory/send_csv',
  operationId: 'sendTrajectoryCsv',
  summary: 'Publish a trajectory from CSV',
  description:
    'As POST /trajectory/send, from an uploaded CSV file (multipart part `file`, at most 10 MiB, at most 100,000 rows, times 0..86400 s, ' +
    'angles within +-2 pi). Errors name the row and column.',
  tags: ['trajectory'],
  query: querySchema,
  body: { contentType: 'multipart/form-data', schema: bodySchema },
  responses: {
    200: { description: 'Published.', schema: SentCsvSchema },
    409: { description: 'A motion or a sequence holds the arm.', schema: ErrorDetailSchema },
    503: {
      description: 'The controller topic is unavailable, or no joint state to check from.',
      schema: ErrorDetailSchema,
    },
  },
} as const satisfies RouteSpec;

/** POST /trajectory/send_csv: the file is parsed and checked on the trajectory worker thread. */
export async function handler(request: Request): Promise<Response> {
  const query = parseQuery(request, querySchema);
  if (!query.ok) return errorResponse(query.error);
  const body = await parseMultipart(request, { fileParts: ['file'], fieldParts: [] });
  if (!body.ok) return errorResponse(body.error);
  const file = body.value.files.file;
  if (!file)
    return errorResponse(
      invalid(['body', 'file'], "Field required: upload the CSV as the multipart part 'file'", 'missing'),
    );
  // A copy of its own (the upload may sit in a shared pool) that the worker takes over.
  const bytes = new Uint8Array(file.data);
  const source = {
    kind: 'csv',
    bytes,
    separator: query.value.separator,
    validateLimits: query.value.validate_limits,
  } as const;
  return checkAndPublish(source, [bytes.buffer], `POST /trajectory/send_csv (${file.filename})`, {
    file: file.filename,
  });
}
