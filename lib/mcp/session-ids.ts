import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** What the ids of sessions issued here tell. */
export interface SessionIds {
  /** A new id for a session of `owner`; `elicits`: its client declared elicitation at initialize. */
  issue(owner: string, elicits?: boolean): string;
  /** True when `id` was issued here for `owner`. */
  issuedHere(id: string, owner: string): boolean;
  /** True when `id` was issued here for `owner` to a client that declared elicitation. */
  elicits(id: string, owner: string): boolean;
}

/**
 * Session ids this process issued carry an HMAC of their random part, of the principal that opened the session and of
 * whether its client declared elicitation, under a key of its own: an id whose session was closed for idleness or for
 * room can be told apart from one never issued, a session belongs to its principal even when it is rebuilt (another
 * principal's id is as good as none), and a rebuilt session knows its client can be asked (mcp.confirm_motion) with
 * nothing kept in memory, however many sessions were opened since.
 */
export function sessionIds(): SessionIds {
  const key = randomBytes(32);
  const mac = (nonce: string, owner: string, elicits: boolean) =>
    createHmac('sha256', key)
      .update(elicits ? `${nonce}\n${owner}\nelicitation` : `${nonce}\n${owner}`)
      .digest('base64url')
      .slice(0, 22);
  const matches = (id: string, owner: string, elicits: boolean) => {
    if (id.indexOf('.') !== 22 || id.length !== 45) return false;
    const given = Buffer.from(id.slice(23));
    const expected = Buffer.from(mac(id.slice(0, 22), owner, elicits));
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  return {
    issue: (owner, elicits = false) => {
      const nonce = randomBytes(16).toString('base64url');
      return `${nonce}.${mac(nonce, owner, elicits)}`;
    },
    issuedHere: (id, owner) => matches(id, owner, false) || matches(id, owner, true),
    elicits: (id, owner) => matches(id, owner, true),
  };
}
