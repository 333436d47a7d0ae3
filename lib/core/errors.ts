import type * as v from 'valibot';
import { keysAt } from './schema-shape.ts';

/** One entry of a 422 body, in the shape FastAPI clients already parse. */
export interface ValidationIssue {
  readonly loc: readonly (string | number)[];
  readonly msg: string;
  readonly type: string;
}

/** Everything a request can fail with, mapped to a status by {@link STATUS_OF_KIND}. */
export type ApiError =
  | { readonly kind: 'validation'; readonly issues: readonly [ValidationIssue, ...ValidationIssue[]] }
  | { readonly kind: 'unauthorized'; readonly detail: string }
  | { readonly kind: 'forbidden'; readonly detail: string }
  | { readonly kind: 'unsupported_media_type'; readonly detail: string }
  | { readonly kind: 'not_found'; readonly detail: string }
  | { readonly kind: 'method_not_allowed'; readonly detail: string; readonly allow: readonly string[] }
  /** `retryAfterS`: while the arm decelerates after a stop, the seconds until it is at rest (a Retry-After header). */
  | { readonly kind: 'busy'; readonly detail: string; readonly retryAfterS?: number }
  /** A request that conflicts with what armgate keeps (a position of the robot description, a full set): 409, not the arm. */
  | { readonly kind: 'conflict'; readonly detail: string }
  | { readonly kind: 'payload_too_large'; readonly detail: string }
  | { readonly kind: 'unavailable'; readonly detail: string }
  /** Too many wrong tokens from one address (lib/auth/guesses.ts): Retry-After says when one more is compared. */
  | { readonly kind: 'too_many_requests'; readonly detail: string; readonly retryAfterS: number }
  | { readonly kind: 'internal'; readonly detail: string };

/**
 * The status each error kind answers: the one table of it. The REST face answers it as the HTTP status, the audit
 * trail records it for every face (an MCP tool error included), and a new face (a WebSocket, Foxglove) reports it.
 */
export const STATUS_OF_KIND: Readonly<Record<ApiError['kind'], number>> = {
  validation: 422,
  unauthorized: 401,
  forbidden: 403,
  unsupported_media_type: 415,
  not_found: 404,
  method_not_allowed: 405,
  busy: 409,
  conflict: 409,
  payload_too_large: 413,
  unavailable: 503,
  too_many_requests: 429,
  internal: 500,
};

/** The status of an error (see {@link STATUS_OF_KIND}). */
export function statusOf(error: Pick<ApiError, 'kind'>): number {
  return STATUS_OF_KIND[error.kind];
}

/** Most validation issues a 422 body lists; the rest are counted in one last entry. */
export const MAX_REPORTED_ISSUES = 20;
/** Longest message of one reported issue (characters). */
const MAX_ISSUE_MESSAGE = 500;

/**
 * The first {@link MAX_REPORTED_ISSUES} issues, messages cut to a readable length, and, when there
 * are more, an entry saying how many: a 422 body stays small whatever the input.
 */
export function boundedIssues(issues: readonly ValidationIssue[]): ValidationIssue[] {
  // Already bounded (by the trajectory worker): its count of the rest stays.
  if (issues.length <= MAX_REPORTED_ISSUES + 1 && issues.at(-1)?.type === 'more_issues') return [...issues];
  const shown = issues
    .slice(0, MAX_REPORTED_ISSUES)
    .map((issue) =>
      issue.msg.length > MAX_ISSUE_MESSAGE ? { ...issue, msg: `${issue.msg.slice(0, MAX_ISSUE_MESSAGE)}...` } : issue,
    );
  const more = issues.length - shown.length;
  if (more > 0) shown.push({ loc: [], msg: `and ${more} more issue(s) of the same request`, type: 'more_issues' });
  return shown;
}

/** A validation error with one issue. */
export function invalid(loc: readonly (string | number)[], msg: string, type = 'value_error'): ApiError {
  return { kind: 'validation', issues: [{ loc, msg, type }] };
}

/**
 * Converts valibot issues to 422 issues located under `root` ('body', 'query', or a path such as ['body', 'config']).
 * `schema`: the schema that was parsed, so that an unknown key's message names the keys taken there.
 */
export function fromValibot(
  root: string | readonly (string | number)[],
  issues: readonly [v.BaseIssue<unknown>, ...v.BaseIssue<unknown>[]],
  schema?: v.GenericSchema,
): ApiError {
  const base = typeof root === 'string' ? [root] : [...root];
  const [first, ...rest] = issues.map((issue) => {
    const path = pathOf(issue);
    return { loc: [...base, ...path], ...issueText(issue, path, schema) };
  });
  return { kind: 'validation', issues: [first as ValidationIssue, ...rest] };
}

/** The keys and indexes of an issue's path. */
function pathOf(issue: v.BaseIssue<unknown>): (string | number)[] {
  return (issue.path ?? []).map((item) => (typeof item.key === 'number' ? item.key : String(item.key)));
}

/**
 * The one rendering of a valibot issue's message and type (both faces, every body): a missing field is 'Field
 * required'; an unknown key of a strict object names the keys taken there (and the likeliest one when it is a near
 * miss), instead of valibot's 'Invalid key: Expected never but received "sped"'.
 */
function issueText(
  issue: v.BaseIssue<unknown>,
  path: readonly (string | number)[],
  schema: v.GenericSchema | undefined,
): { msg: string; type: string } {
  if (issue.kind === 'schema' && issue.input === undefined && path.length > 0)
    return { msg: 'Field required', type: 'missing' };
  const key = path.at(-1);
  if (issue.type === 'strict_object' && issue.expected === 'never' && typeof key === 'string') {
    const keys = schema ? keysAt(schema, path.slice(0, -1)) : undefined;
    if (keys) {
      const near = keys.find((known) => editDistance(known, key) <= 2);
      const shown = JSON.stringify(key.slice(0, 64));
      return {
        msg:
          keys.length === 0
            ? `unknown key ${shown}: no keys are taken here`
            : `unknown key ${shown}${near ? ` (did you mean "${near}"?)` : ''}; the keys are ${keys.join(', ')}`,
        type: 'unknown_key',
      };
    }
  }
  return { msg: issue.message, type: issue.type };
}

/** Levenshtein distance, stopped early past 2 (near misses only). */
function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2 || b.length > 64) return 3;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(
        (previous[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    previous = row;
  }
  return previous[b.length] as number;
}

/** A 503 for a ROS interface that did not answer. */
export function unavailable(cause: { readonly message: string }): ApiError {
  return { kind: 'unavailable', detail: cause.message };
}

/**
 * Validation issues located under a root each face chooses per field (REST: 'query', 'path' or 'body'; MCP:
 * 'arguments'), then the field path; `schema` as for {@link fromValibot}.
 */
export function locatedIssues(
  issues: readonly [v.BaseIssue<unknown>, ...v.BaseIssue<unknown>[]],
  rootOf: (field: string | undefined) => string,
  schema?: v.GenericSchema,
): ApiError {
  const located = issues.map((issue): ValidationIssue => {
    const path = pathOf(issue);
    return {
      loc: [rootOf(typeof path[0] === 'string' ? path[0] : undefined), ...path],
      ...issueText(issue, path, schema),
    };
  });
  return { kind: 'validation', issues: located as [ValidationIssue, ...ValidationIssue[]] };
}
