/**
 * Calls that changed nothing, told apart from those that may have, and counted instead of written one by one.
 *
 * A call changed nothing (it is "quiet") when it was a read, refused with a 4xx (its role, its input, a busy arm, an
 * unknown name, a declined confirmation: armgate refuses before anything reaches the arm), a dry run, or a repeat: a
 * call that succeeded just like the same caller's last one of that operation on the trail (same interface, input as
 * the operation read it, outcome), with nothing changed since that one (no lease given by the arbiter, no effect line;
 * a stop or a pause does not see stops' and pauses' lines) but the arm taken by the call itself, once, when it is a
 * move to a target (lib/audit/trail.ts). So a call that took the arm is never a repeat but a move to where the last
 * one left the arm, and a repeat moved nothing: a stop or a pause again at rest, the same override again, a move to
 * where the arm already is, a jog command sent again within its jog (it keeps the jog going; the jog's start and end
 * are lines of their own). Every other call of a motion, stop or write operation (motions started, ended, refused at
 * the arm; stops, pauses, resumes, overrides, jogs, taught positions) is an effect: one line each, on a file no quiet
 * call is written to.
 *
 * Quiet calls are grouped per caller, interface, operation, status and why they are quiet: the first of a group in a
 * window is written in full, the rest counted, and the window's end writes one line per group with the count ("and N
 * more like it between since and until"). At most {@link QUIET_GROUPS_MAX} groups of a caller per window, the rest of
 * its calls counted together under its name.
 * The effects of operations that are adjustments coming as a stream (`countedInBursts`: a jog command, the speed
 * override, a taught position) are counted alike (on their own file, `why: "burst"`) beyond {@link EFFECT_LINES_MAX}
 * lines of one caller in a window: a flood of changes (a jog command changed a little each time) cannot outgrow the
 * effects' file either. Nothing that starts, ends or stops a motion (a move, a jog's start and end, a stop) is counted.
 */
import type { AuditInterface } from './interface.ts';

/**
 * Groups of one caller counted apart per window at most; its calls of further groups are counted on one line of its
 * own (operation '*'): no caller's flood of kinds takes another's groups (the callers are the tokens: a bounded set).
 */
export const QUIET_GROUPS_MAX = 256;
/** Last calls remembered (per caller, interface and operation) to tell a repeat. */
export const REPEATS_REMEMBERED = 256;
/** Adjustment lines (`countedInBursts`) of one caller per window written in full at most; beyond, counted (`burst`). */
export const EFFECT_LINES_MAX = 50;

/** Why a call changed nothing. */
export type Quiet = 'read' | 'refused' | 'dry_run' | 'repeat';
/** Why a call is counted: it changed nothing, or it is an effect of a caller past {@link EFFECT_LINES_MAX}. */
export type Counted = Quiet | 'burst';

/** Effect lines written per caller in the current window (the callers are the tokens' names: a bounded set). */
export class EffectBudget {
  #used = new Map<string, number>();

  /** True when `principal` may have one more effect line in full this window. */
  spend(principal: string): boolean {
    const used = (this.#used.get(principal) ?? 0) + 1;
    this.#used.set(principal, used);
    return used <= EFFECT_LINES_MAX;
  }

  /** A new window. */
  reset(): void {
    this.#used = new Map();
  }
}

/** What the quiet test reads of a call. */
export interface QuietFacts {
  readonly effect: 'read' | 'motion' | 'stop' | 'write';
  readonly status: number;
  /** The input as the trail shows it. */
  readonly input: unknown;
}

/** Why `call` changed nothing, or undefined when it may have changed something (repeats aside: {@link Repeats}). */
export function quietOf(call: QuietFacts): Quiet | undefined {
  if (call.effect === 'read') return 'read';
  if (call.status >= 400 && call.status < 500) return 'refused';
  const input = call.input as { dry_run?: unknown } | null | undefined;
  if (typeof input === 'object' && input?.dry_run === true) return 'dry_run';
  return undefined;
}

/**
 * Each caller's last call of each operation on the trail (per caller, interface and operation: `last`), by its input
 * and outcome (`like`) and the count of changes it left (`changes`): the next one alike that finds the count as that
 * one left it (its own lease aside, for a move to a target) did the same again with nothing changed between: a repeat.
 */
export class Repeats {
  readonly #last = new Map<string, { readonly like: string; readonly changes: number }>();

  /** True when `last`'s call on the trail is `like` this one and left the count of changes at `changes`. */
  repeats(last: string, like: string, changes: number): boolean {
    const seen = this.#last.get(last);
    return seen !== undefined && seen.like === like && seen.changes === changes;
  }

  /** Remembers `last`'s latest call (the oldest one is forgotten beyond {@link REPEATS_REMEMBERED}). */
  written(last: string, like: string, changes: number): void {
    this.#last.delete(last);
    this.#last.set(last, { like, changes });
    if (this.#last.size > REPEATS_REMEMBERED) this.#last.delete(this.#last.keys().next().value as string);
  }
}

/** A quiet call as the counts see it. */
export interface QuietCall {
  readonly time: string;
  readonly principal: string;
  readonly role: string;
  readonly interface: AuditInterface;
  readonly operation: string;
  readonly status: number;
  readonly success: boolean;
  readonly why: Counted;
}

/** The line a window writes for a group whose calls beyond the first were counted. */
export interface QuietSummary {
  readonly time: string;
  readonly principal: string;
  readonly role: string;
  readonly interface: AuditInterface | '*';
  readonly operation: string;
  readonly why: Counted | '*';
  /** Calls like the group's first line of the window that were counted, not written. */
  readonly more_like_it: number;
  /** The first and the last of them (ISO 8601). */
  readonly since: string;
  readonly until: string;
  readonly outcome: { readonly status: number; readonly success: boolean };
}

interface Group {
  readonly call: QuietCall;
  more: number;
  since: string;
  until: string;
}

/** The groups of the current window. */
export class QuietCounts {
  #groups = new Map<string, Group>();
  /** Groups counted apart per caller this window. */
  #perCaller = new Map<string, number>();

  /** True when `call` is the first of its group this window (write it); otherwise it is counted. */
  add(call: QuietCall): boolean {
    let key = `${call.principal}\n${call.interface}\n${call.operation}\n${call.status}\n${call.success}\n${call.why}`;
    let group = this.#groups.get(key);
    if (!group) {
      const groups = this.#perCaller.get(call.principal) ?? 0;
      if (groups < QUIET_GROUPS_MAX) {
        this.#perCaller.set(call.principal, groups + 1);
        this.#groups.set(key, { call, more: 0, since: call.time, until: call.time });
        return true;
      }
      key = `*\n${call.principal}`;
      group = this.#groups.get(key);
      if (!group) {
        const all: QuietCall = { ...call, operation: '*', status: 0, success: false };
        group = { call: all, more: 0, since: call.time, until: call.time };
        this.#groups.set(key, group);
      }
    }
    if (group.more === 0) group.since = call.time;
    group.more++;
    group.until = call.time;
    return false;
  }

  /** The window's summary lines (groups with calls counted), and a new window begun. */
  take(): QuietSummary[] {
    const time = new Date().toISOString();
    const lines: QuietSummary[] = [];
    for (const [key, g] of this.#groups) {
      if (g.more === 0) continue;
      const all = key.startsWith('*\n');
      lines.push({
        time,
        principal: g.call.principal,
        role: g.call.role,
        interface: all ? '*' : g.call.interface,
        operation: g.call.operation,
        why: all ? '*' : g.call.why,
        more_like_it: g.more,
        since: g.since,
        until: g.until,
        outcome: { status: g.call.status, success: g.call.success },
      });
    }
    this.#groups = new Map();
    this.#perCaller = new Map();
    return lines;
  }
}
