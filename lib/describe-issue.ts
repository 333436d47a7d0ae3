import type * as v from 'valibot';

/** Formats the first valibot issue as `key.path: message`, naming the settings key. */
export function describeIssue(prefix: string, issues: readonly v.BaseIssue<unknown>[]): string {
  const issue = issues[0];
  if (!issue) return `${prefix}: invalid`;
  const keys = (issue.path ?? []).map((item) => String(item.key));
  const where = [prefix, ...keys].filter((part) => part.length > 0).join('.');
  return `${where}: ${issue.message}`;
}
