import type * as v from 'valibot';

/** One entry of a 422 body, in the shape FastAPI clients already parse. */
export interface ValidationIssue {
  readonly loc: readonly (string | number)[];
  readonly msg: string;
  readonly type: string;
}

/** Everything a request can fail with, mapped to a status by {@link statusOf}. */
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
  | { readonly kind: 'internal'; readonly detail: string };

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

/** Converts valibot issues to 422 issues located under `root` ('body', 'query', or a path such as ['body', 'config']). */
export function fromValibot(
  root: string | readonly (string | number)[],
  issues: readonly [v.BaseIssue<unknown>, ...v.BaseIssue<unknown>[]],
): ApiError {
  const [first, ...rest] = issues.map((issue) => toIssue(root, issue));
  return { kind: 'validation', issues: [first as ValidationIssue, ...rest] };
}

function toIssue(root: string | readonly (string | number)[], issue: v.BaseIssue<unknown>): ValidationIssue {
  const loc: (string | number)[] = typeof root === 'string' ? [root] : [...root];
  for (const item of issue.path ?? []) {
    const key = item.key;
    loc.push(typeof key === 'number' ? key : String(key));
  }
  const missing = issue.kind === 'schema' && issue.input === undefined && (issue.path?.length ?? 0) > 0;
  return { loc, msg: missing ? 'Field required' : issue.message, type: missing ? 'missing' : issue.type };
}

/** A 503 for a ROS interface that did not answer. */
export function unavailable(cause: { readonly message: string }): ApiError {
  return { kind: 'unavailable', detail: cause.message };
}

/** Validation issues located under a root each face chooses per field (REST: 'query', 'path' or 'body'; MCP: 'arguments'), then the field path. */
export function locatedIssues(
  issues: readonly [v.BaseIssue<unknown>, ...v.BaseIssue<unknown>[]],
  rootOf: (field: string | undefined) => string,
): ApiError {
  const located = issues.map((issue): ValidationIssue => {
    const path = (issue.path ?? []).map((item) => (typeof item.key === 'number' ? item.key : String(item.key)));
    const missing = issue.kind === 'schema' && issue.input === undefined && path.length > 0;
    return {
      loc: [rootOf(typeof path[0] === 'string' ? path[0] : undefined), ...path],
      msg: missing ? 'Field required' : issue.message,
      type: missing ? 'missing' : issue.type,
    };
  });
  return { kind: 'validation', issues: located as [ValidationIssue, ...ValidationIssue[]] };
}
