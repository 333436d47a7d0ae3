/**
 * Token guessing slowed, per client address (pure: the clock is injected). Each address has a bucket of wrong tokens:
 * a burst at first (web.limits.token_guess_burst, 10), one more every web.limits.token_guess_refill_s (1 s). While the bucket is empty, a token from
 * that address is served only if it is one of the tokens already served to that address; any other token is answered
 * 429 with Retry-After, right or wrong (lib/http/auth.ts compares it only for a stop, below). So a client whose token was served from its address goes on at once (its stop
 * too) while a guesser beside it gets 429s, and a guesser learns nothing faster than one token per refill.
 *
 * Why not "a right token is always served": an answer that serves the right token at once tells a guesser which token
 * was right however many wrong ones were refused, so refusing the wrong ones would slow nothing. The price: a client
 * whose token was never served from an address that is guessing waits as long as the guessing lasts, except for a
 * stop: authentication still compares its token (lib/http/auth.ts, `stopOnly`) and the faces carry out a right
 * token's stop, answered with the same 429 (docs/safe-deployment.md).
 *
 * IPv6 addresses count by their /64 (a host usually holds the whole prefix; an IPv4-mapped one as its IPv4). The table
 * is bounded ({@link GUESS_ADDRESSES_MAX} addresses) and forgetting never hands out a fresh burst: only an address
 * whose bucket is full again and that holds no served token is forgotten (it is then the same as a new one). While the
 * table is full of addresses that still owe, every other address shares one more bucket, the overflow (the same
 * burst and refill), so the wrong tokens compared in all stay at most (table + 1) x burst at once, then
 * (table + 1) per refill, however many addresses send them. A right token is remembered as served even then (it
 * forgets the least recently seen address; a guesser cannot make that happen, it needs a right token).
 */
import { timingSafeEqual } from 'node:crypto';

/** How fast guessing may go: wrong tokens an address may send at once, then seconds per further one. */
export interface GuessPolicy {
  readonly burst: number;
  readonly refillS: number;
}

/** The default policy (web.limits.token_guess_burst and token_guess_refill_s). */
export const GUESS_POLICY: GuessPolicy = { burst: 10, refillS: 1 };
/** Addresses remembered at most (each: a bucket and the digests of the tokens served to it). */
export const GUESS_ADDRESSES_MAX = 4096;
/** Tokens remembered as served per address at most. */
const SERVED_MAX = 8;
/** Least recently seen addresses looked at, at most, for one that may be forgotten. */
const ROOM_LOOKS = 8;

interface Entry {
  /** Wrong tokens still allowed now (fractional while refilling). */
  credit: number;
  /** When credit was last worked out (ms of the injected clock). */
  at: number;
  /** Digests of the tokens served to this address. */
  readonly served: Buffer[];
}

/** What to do with a token from an address: compare it with every token, only with those served here, or refuse it. */
export type GuessDecision = { readonly kind: 'check' } | { readonly kind: 'served_only'; readonly retryAfterS: number };

/** The key of an address: IPv4 as is (also IPv4-mapped IPv6, either form), IPv6 by its first four groups (its /64). */
export function addressKey(address: string): string {
  if (!address.includes(':')) return address;
  const bare = address.replace(/%.*$/, '').toLowerCase();
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(bare);
  if (dotted?.[1]) return dotted[1];
  const [head = '', tail = ''] = bare.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = bare.includes('::')
    ? [...left, ...new Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right]
    : left;
  const words = groups.map((g) => Number.parseInt(g, 16) || 0);
  if (groups.length === 8 && words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff) {
    const [hi = 0, lo = 0] = words.slice(6);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return `${words
    .slice(0, 4)
    .map((w) => w.toString(16))
    .join(':')}::/64`;
}

/** The per-address buckets (see the module comment). */
export class GuessLimiter {
  readonly #entries = new Map<string, Entry>();
  /** The bucket shared by the addresses the full table has no room for. */
  readonly #overflow: Entry;
  readonly #policy: GuessPolicy;
  readonly #now: () => number;
  readonly #max: number;

  constructor(
    policy: GuessPolicy = GUESS_POLICY,
    now: () => number = () => performance.now(),
    maxAddresses = GUESS_ADDRESSES_MAX,
  ) {
    this.#policy = policy;
    this.#now = now;
    this.#max = maxAddresses;
    this.#overflow = { credit: policy.burst, at: now(), served: [] };
  }

  /** How many addresses are remembered. */
  get size(): number {
    return this.#entries.size;
  }

  /** Before a token from `address` is compared: with every token, or (the bucket empty) only with those served here. */
  decide(address: string): GuessDecision {
    const key = addressKey(address);
    const entry = this.#entries.get(key) ?? (this.#room() ? undefined : this.#overflow);
    if (!entry) return { kind: 'check' };
    this.#refill(entry);
    if (entry.credit >= 1) return { kind: 'check' };
    return { kind: 'served_only', retryAfterS: Math.max(1, Math.ceil((1 - entry.credit) * this.#policy.refillS)) };
  }

  /** True when `digest` is one of the tokens served to `address`, compared in constant time each. */
  servedHere(address: string, digest: Buffer): boolean {
    let found = false;
    for (const known of this.#entries.get(addressKey(address))?.served ?? [])
      if (timingSafeEqual(known, digest)) found = true;
    return found;
  }

  /** A wrong token from `address`: one credit spent (the overflow's when the full table has no room for it). */
  wrong(address: string): void {
    const key = addressKey(address);
    const entry = this.#entries.has(key) || this.#room() ? this.#touch(key) : this.#overflow;
    this.#refill(entry);
    entry.credit = Math.max(0, entry.credit - 1);
  }

  /** A right token from `address` (its digest): remembered as served here. */
  right(address: string, digest: Buffer): void {
    const key = addressKey(address);
    // The common case, a known client again, changes nothing (no reordering on the read path).
    if (this.#entries.get(key)?.served.some((known) => known.equals(digest))) return;
    if (!this.#entries.has(key) && !this.#room()) {
      // No address to forget for free: the least recently seen one goes (only a right token gets here).
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    const entry = this.#touch(key);
    if (entry.served.length >= SERVED_MAX) entry.served.shift();
    entry.served.push(digest);
  }

  #refill(entry: Entry): void {
    const now = this.#now();
    entry.credit = Math.min(this.#policy.burst, entry.credit + (now - entry.at) / 1000 / this.#policy.refillS);
    entry.at = now;
  }

  /**
   * True when a new address fits: the table is not full, or one of its least recently seen addresses may be forgotten
   * for free (its bucket full again and no token served to it: the same as a new address), which is then forgotten.
   * Addresses holding served tokens are passed over (moved to the recent end), a few at a time.
   */
  #room(): boolean {
    if (this.#entries.size < this.#max) return true;
    for (let looked = 0; looked < ROOM_LOOKS; looked++) {
      const oldest = this.#entries.entries().next().value;
      if (oldest === undefined) return true;
      const [key, entry] = oldest;
      this.#refill(entry);
      if (entry.served.length === 0) {
        if (entry.credit < this.#policy.burst) return false;
        this.#entries.delete(key);
        return true;
      }
      this.#entries.delete(key);
      this.#entries.set(key, entry);
    }
    return false;
  }

  /** The entry of `key`, made the most recently seen (a new one when absent; {@link #room} made room). */
  #touch(key: string): Entry {
    let entry = this.#entries.get(key);
    if (entry) this.#entries.delete(key);
    else entry = { credit: this.#policy.burst, at: this.#now(), served: [] };
    this.#entries.set(key, entry);
    return entry;
  }
}
