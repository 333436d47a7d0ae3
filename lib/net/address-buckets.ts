/**
 * Token buckets per client address, in a bounded table (pure: the clock is injected). What a rate per address needs:
 * the token-guess limit (lib/auth/guesses.ts) and the WebSocket upgrade rate (lib/net/upgrade-rate.ts).
 *
 * An address is keyed by {@link addressKey}: IPv4 as is (an IPv4-mapped IPv6 address as its IPv4), IPv6 by its /64
 * (a host is usually given the whole prefix). A new address starts with a full bucket (`burst`), which refills by one
 * every `refillS` seconds. The table holds `max` addresses, and forgetting one never hands out a fresh burst: only an
 * address whose bucket is full again and that holds nothing worth keeping (`keep`) is forgotten, being then the same
 * as a new one. While the table is full of addresses that still owe, every further address shares one more bucket,
 * the overflow: so the credit spent in all is at most (max + 1) x burst at once, then (max + 1) per refill, however
 * many addresses spend it.
 */

/** How fast credit comes: what a new address may spend at once, then seconds per further one. */
export interface BucketPolicy {
  readonly burst: number;
  readonly refillS: number;
}

/** One address's bucket (or the overflow's), with what its user keeps beside it. */
export interface Bucket<T> {
  /** Credit left now (fractional while refilling). */
  credit: number;
  /** When credit was last worked out (ms of the injected clock). */
  at: number;
  readonly data: T;
}

/** Least recently seen addresses looked at, at most, for one that may be forgotten. */
const ROOM_LOOKS = 8;

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

/** The buckets (see the module comment). `make` gives a new bucket's data; `keep` says a full bucket is still kept. */
export class AddressBuckets<T> {
  readonly #entries = new Map<string, Bucket<T>>();
  readonly #overflow: Bucket<T>;
  readonly #policy: BucketPolicy;
  readonly #now: () => number;
  readonly #max: number;
  readonly #make: () => T;
  readonly #keep: (data: T) => boolean;

  constructor(
    policy: BucketPolicy,
    now: () => number,
    max: number,
    make: () => T,
    keep: (data: T) => boolean = () => false,
  ) {
    this.#policy = policy;
    this.#now = now;
    this.#max = max;
    this.#make = make;
    this.#keep = keep;
    this.#overflow = { credit: policy.burst, at: now(), data: make() };
  }

  /** How many addresses are remembered. */
  get size(): number {
    return this.#entries.size;
  }

  /** The bucket of a known address, as it is (no refill, no reordering). */
  known(address: string): Bucket<T> | undefined {
    return this.#entries.get(addressKey(address));
  }

  /** The credit `address` has now: its bucket's, a new address's (a full burst) or, the table full, the overflow's. */
  credit(address: string): number {
    const key = addressKey(address);
    const bucket = this.#entries.get(key) ?? (this.#room() ? undefined : this.#overflow);
    if (!bucket) return this.#policy.burst;
    this.#refill(bucket);
    return bucket.credit;
  }

  /** Seconds until `address` has one credit again (at least 1). */
  retryAfterS(credit: number): number {
    return Math.max(1, Math.ceil((1 - credit) * this.#policy.refillS));
  }

  /** One credit spent by `address` (none below zero): its bucket's, or the overflow's when the table has no room. */
  spend(address: string): void {
    const key = addressKey(address);
    const bucket = this.#entries.has(key) || this.#room() ? this.#touch(key) : this.#overflow;
    this.#refill(bucket);
    bucket.credit = Math.max(0, bucket.credit - 1);
  }

  /**
   * The bucket of `address`, made the most recently seen, a new one made when absent: for data worth keeping (`keep`),
   * which only a caller's own rule decides. With no room, the least recently seen address gives way.
   */
  remember(address: string): Bucket<T> {
    const key = addressKey(address);
    if (!this.#entries.has(key) && !this.#room()) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    return this.#touch(key);
  }

  #refill(bucket: Bucket<T>): void {
    const now = this.#now();
    bucket.credit = Math.min(this.#policy.burst, bucket.credit + (now - bucket.at) / 1000 / this.#policy.refillS);
    bucket.at = now;
  }

  /**
   * True when a new address fits: the table is not full, or one of its least recently seen addresses may be forgotten
   * (its bucket full again, nothing kept), which is then forgotten. Those that keep something are passed over (moved
   * to the recent end), a few at a time; one that still owes ends the look.
   */
  #room(): boolean {
    if (this.#entries.size < this.#max) return true;
    for (let looked = 0; looked < ROOM_LOOKS; looked++) {
      const oldest = this.#entries.entries().next().value;
      if (oldest === undefined) return true;
      const [key, bucket] = oldest;
      this.#refill(bucket);
      if (!this.#keep(bucket.data)) {
        if (bucket.credit < this.#policy.burst) return false;
        this.#entries.delete(key);
        return true;
      }
      this.#entries.delete(key);
      this.#entries.set(key, bucket);
    }
    return false;
  }

  /** The bucket of `key`, made the most recently seen (a new one when absent: {@link #room} made room). */
  #touch(key: string): Bucket<T> {
    let bucket = this.#entries.get(key);
    if (bucket) this.#entries.delete(key);
    else bucket = { credit: this.#policy.burst, at: this.#now(), data: this.#make() };
    this.#entries.set(key, bucket);
    return bucket;
  }
}
