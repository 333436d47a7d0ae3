/**
 * WebSocket upgrades per client address, rate-limited before any WebSocket work (pure: the clock is injected). An
 * upgrade costs a handshake and a connection's first messages; a client that reconnects in a loop made that cost the
 * event loop's, and a stop waited behind it. Each address (lib/net/address-buckets.ts: an IPv6 /64, the table bounded)
 * may open {@link UPGRADE_POLICY}'s burst at once, then one more per refill; beyond that the upgrade is answered 429
 * with Retry-After by the face, on the raw socket, before the token is looked at. The Foxglove face (lib/foxglove/
 * server.ts) and the WebSocket routes of the HTTP face (lib/http/websocket.ts) each hold one.
 */
import { AddressBuckets, type BucketPolicy } from './address-buckets.ts';

/** Upgrades an address may open at once, then one more every 0.1 s (10 a second). */
export const UPGRADE_POLICY: BucketPolicy = { burst: 20, refillS: 0.1 };
/** Addresses remembered at most. */
export const UPGRADE_ADDRESSES_MAX = 4096;

/** Whether an upgrade may go on now, or the seconds to wait. */
export type UpgradeDecision = { readonly ok: true } | { readonly ok: false; readonly retryAfterS: number };

/** The per-address rate of upgrades (see the module comment). */
export class UpgradeRate {
  readonly #buckets: AddressBuckets<undefined>;
  readonly #policy: BucketPolicy;

  constructor(
    policy: BucketPolicy = UPGRADE_POLICY,
    now: () => number = () => performance.now(),
    maxAddresses = UPGRADE_ADDRESSES_MAX,
  ) {
    this.#policy = policy;
    this.#buckets = new AddressBuckets(policy, now, maxAddresses, () => undefined);
  }

  /** An upgrade from `address`: taken (one credit spent), or refused with the seconds until one is allowed. */
  take(address: string): UpgradeDecision {
    const credit = this.#buckets.credit(address);
    if (credit < 1) return { ok: false, retryAfterS: this.#buckets.retryAfterS(credit) };
    this.#buckets.spend(address);
    return { ok: true };
  }

  /** What a refusal says. */
  describe(what: string): string {
    const perS = Math.round(1 / this.#policy.refillS);
    return `more than ${this.#policy.burst} ${what} upgrades at once, then ${perS} a second, from this address`;
  }
}
