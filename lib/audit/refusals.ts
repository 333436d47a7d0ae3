/**
 * Requests refused before they reached an operation (no token, a wrong one, too many wrong ones) counted per face,
 * client address and reason over a window, instead of one line each: a flood of them makes one line per address and
 * reason per window. At most {@link REFUSAL_KEYS_MAX} keys per window; further addresses are counted under '*'.
 */

import type { AuditInterface } from './interface.ts';

/** Keys (face, address, reason) counted per window at most; the rest under the address '*'. */
export const REFUSAL_KEYS_MAX = 256;

/** One line of the summary. */
export interface RefusalSummary {
  /** The end of the window (ISO 8601). */
  readonly time: string;
  readonly principal: 'anonymous';
  readonly role: 'none';
  readonly interface: AuditInterface;
  /** The first request refused in the window for this key: `METHOD path`. */
  readonly operation: string;
  readonly address: string;
  /** How many requests the key refused in the window. */
  readonly count: number;
  /** When the window's first refusal of the key came (ISO 8601). */
  readonly since: string;
  readonly outcome: { readonly status: number; readonly success: false; readonly message: string };
}

interface Count {
  readonly face: AuditInterface;
  readonly address: string;
  readonly operation: string;
  readonly status: number;
  readonly reason: string;
  readonly since: string;
  count: number;
}

/** The counts of the current window. */
export class RefusalCounts {
  #counts = new Map<string, Count>();

  get empty(): boolean {
    return this.#counts.size === 0;
  }

  /** Counts one refusal (`operation`: `METHOD path`, already cut). */
  add(face: AuditInterface, address: string, operation: string, status: number, reason: string): void {
    let key = `${face} ${status} ${address} ${reason}`;
    let count = this.#counts.get(key);
    if (!count && this.#counts.size >= REFUSAL_KEYS_MAX) {
      address = '*';
      key = `${face} ${status} * ${reason}`;
      count = this.#counts.get(key);
    }
    if (count) count.count++;
    else this.#counts.set(key, { face, address, operation, status, reason, since: new Date().toISOString(), count: 1 });
  }

  /** The window's lines, and a new window begun. */
  take(): RefusalSummary[] {
    const time = new Date().toISOString();
    const lines = [...this.#counts.values()].map(
      (c): RefusalSummary => ({
        time,
        principal: 'anonymous',
        role: 'none',
        interface: c.face,
        operation: c.operation,
        address: c.address,
        count: c.count,
        since: c.since,
        outcome: { status: c.status, success: false, message: c.reason },
      }),
    );
    this.#counts = new Map();
    return lines;
  }
}
