/**
 * Token guessing slowed, per client address (pure: the clock is injected). Each address has a bucket of wrong tokens:
 * a burst at first (web.limits.token_guess_burst, 10), one more every web.limits.token_guess_refill_s (1 s). While the
 * bucket is empty, a token from that address is served only if it is one of the tokens already served to that
 * address; any other token is answered 429 with Retry-After, right or wrong (lib/admission/front-door.ts compares it
 * only for a stop, below). So a client whose token was served from its address goes on at once (its stop too) while a
 * guesser beside it gets 429s, and a guesser learns nothing faster than one token per refill.
 *
 * Why not "a right token is always served": an answer that serves the right token at once tells a guesser which token
 * was right however many wrong ones were refused, so refusing the wrong ones would slow nothing. The price: a client
 * whose token was never served from an address that is guessing waits as long as the guessing lasts, except for a
 * stop: authentication still compares its token (lib/admission/front-door.ts, `stopOnly`) and the faces carry out a
 * right token's stop, answered with the same 429 (docs/safe-deployment.md).
 *
 * The buckets are lib/net/address-buckets.ts's: IPv6 addresses count by their /64 (an IPv4-mapped one as its IPv4);
 * the table is bounded ({@link GUESS_ADDRESSES_MAX} addresses) and forgetting never hands out a fresh burst (only an
 * address whose bucket is full again and that holds no served token is forgotten; while the table is full of
 * addresses that still owe, every other address shares one overflow bucket), so the wrong tokens compared in all stay
 * at most (table + 1) x burst at once, then (table + 1) per refill, however many addresses send them. A right token is
 * remembered as served even then (the least recently seen address gives way; a guesser cannot make that happen).
 */
import { timingSafeEqual } from 'node:crypto';
import { AddressBuckets, type BucketPolicy } from '../net/address-buckets.ts';

export { addressKey } from '../net/address-buckets.ts';

/** How fast guessing may go: wrong tokens an address may send at once, then seconds per further one. */
export type GuessPolicy = BucketPolicy;

/** The default policy (web.limits.token_guess_burst and token_guess_refill_s). */
export const GUESS_POLICY: GuessPolicy = { burst: 10, refillS: 1 };
/** Addresses remembered at most (each: a bucket and the digests of the tokens served to it). */
export const GUESS_ADDRESSES_MAX = 4096;
/** Tokens remembered as served per address at most. */
const SERVED_MAX = 8;

/** What to do with a token from an address: compare it with every token, only with those served here, or refuse it. */
export type GuessDecision = { readonly kind: 'check' } | { readonly kind: 'served_only'; readonly retryAfterS: number };

/** The per-address buckets of wrong tokens, each with the digests of the tokens served there (see the module comment). */
export class GuessLimiter {
  readonly #buckets: AddressBuckets<Buffer[]>;
  /** Told when a token served to an address may have been forgotten (see {@link onForget}). */
  readonly #forgetListeners = new Set<() => void>();

  constructor(
    policy: GuessPolicy = GUESS_POLICY,
    now: () => number = () => performance.now(),
    maxAddresses = GUESS_ADDRESSES_MAX,
  ) {
    this.#buckets = new AddressBuckets<Buffer[]>(
      policy,
      now,
      maxAddresses,
      () => [],
      (served) => served.length > 0,
    );
  }

  /** How many addresses are remembered. */
  get size(): number {
    return this.#buckets.size;
  }

  /** Before a token from `address` is compared: with every token, or (the bucket empty) only with those served here. */
  decide(address: string): GuessDecision {
    const credit = this.#buckets.credit(address);
    if (credit >= 1) return { kind: 'check' };
    return { kind: 'served_only', retryAfterS: this.#buckets.retryAfterS(credit) };
  }

  /** True when `digest` is one of the tokens served to `address`, compared in constant time each. */
  servedHere(address: string, digest: Buffer): boolean {
    let found = false;
    for (const known of this.#buckets.known(address)?.data ?? []) if (timingSafeEqual(known, digest)) found = true;
    return found;
  }

  /** A wrong token from `address`: one credit spent (the overflow's when the full table has no room for it). */
  wrong(address: string): void {
    this.#buckets.spend(address);
  }

  /** A right token from `address` (its digest): remembered as served here. */
  right(address: string, digest: Buffer): void {
    // The common case, a known client again, changes nothing (no reordering on the read path).
    const known = this.#buckets.known(address);
    if (known?.data.some((token) => token.equals(digest))) return;
    const size = this.#buckets.size;
    const served = this.#buckets.remember(address).data;
    // A new address in a full table took the place of the least recently seen one, with the tokens served to it.
    let forgot = !known && this.#buckets.size === size;
    if (served.length >= SERVED_MAX) {
      served.shift();
      forgot = true;
    }
    served.push(digest);
    if (forgot) for (const listener of this.#forgetListeners) listener();
  }

  /**
   * Calls `listener` whenever a token served to an address may have been forgotten (the table full, or the address
   * served more than its share of tokens): for a face that keeps which tokens were served where, to let go of them.
   */
  onForget(listener: () => void): void {
    this.#forgetListeners.add(listener);
  }
}
