import { createHash, timingSafeEqual } from 'node:crypto';
import type { ApiError } from './errors.ts';

/**
 * A Bearer token check. Both sides are hashed to equal-length digests and compared with
 * timingSafeEqual, so the time taken tells nothing about the token. The token is never logged.
 */
export function bearerAuth(token: string | undefined): (request: Request) => ApiError | undefined {
  if (token === undefined) return () => undefined;
  const expected = createHash('sha256').update(token, 'utf8').digest();
  return (request) => {
    const header = request.headers.get('authorization') ?? '';
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    if (!match) {
      return {
        kind: 'unauthorized',
        detail: header
          ? 'Authorization header must be "Bearer <token>"'
          : 'Not authenticated: send "Authorization: Bearer <token>"',
      };
    }
    const given = createHash('sha256')
      .update(match[1] ?? '', 'utf8')
      .digest();
    return timingSafeEqual(given, expected) ? undefined : { kind: 'unauthorized', detail: 'Invalid token' };
  };
}
