import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Session ids this process issued carry an HMAC of their random part and of the principal that opened the session,
 * under a key of its own: an id whose session was closed for idleness or for room can be told apart from one never
 * issued, and a session belongs to its principal even when it is rebuilt (another principal's id is as good as none).
 */
export function sessionIds(): { issue: (owner: string) => string; issuedHere: (id: string, owner: string) => boolean } {
  const key = randomBytes(32);
  const mac = (nonce: string, owner: string) =>
    createHmac('sha256', key).update(`${nonce}\n${owner}`).digest('base64url').slice(0, 22);
  return {
    issue: (owner) => {
      const nonce = randomBytes(16).toString('base64url');
      return `${nonce}.${mac(nonce, owner)}`;
    },
    issuedHere: (id, owner) => {
      const dot = id.indexOf('.');
      if (dot !== 22 || id.length !== 45) return false;
      const given = Buffer.from(id.slice(23));
      const expected = Buffer.from(mac(id.slice(0, 22), owner));
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}
