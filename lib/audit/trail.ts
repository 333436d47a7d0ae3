/**
 * The audit trail: one JSON line per call that reached an operation on either face (refused ones included: a lacking
 * role, a bad input, a busy arm), state-changing ones always and reads with `audit.reads`. The calls that may have
 * changed something at the arm or in its settings (effects: lib/audit/quiet.ts) are written one line each to the
 * trail's file (up to EFFECT_LINES_MAX a window per token, the rest counted there), and only they: no flood of
 * anything else can rotate them out. The calls that changed nothing (reads, 4xx refusals, dry runs, repeats) go to a
 * file of their own (refusalsPath), the first of a kind per window in full and the rest counted; so do requests
 * refused before a call (no token, a wrong one, too many wrong ones), counted per face, address and reason. The
 * counts are written once a window ({@link REFUSAL_WINDOW_MS}).
 * Lines are written in groups, one datasync per group (lib/audit/line-file.ts: a bounded queue; rotation at
 * `audit.max_bytes`, each file on its own). A line names the caller by its token's name, never the token, and carries
 * a bounded summary of the input (numbers and names, no file contents).
 */
import { extname } from 'node:path';
import { logLine } from '../logs/line.ts';
import { LineFile } from './line-file.ts';
import type { AuditInterface } from './interface.ts';
import { type Counted, EffectBudget, type Quiet, QuietCounts, quietOf, Repeats } from './quiet.ts';
import { RefusalCounts } from './refusals.ts';

export type { AuditInterface } from './interface.ts';

export { ROTATED_KEPT } from './line-file.ts';

/** The audit settings (the `audit` block). */
export interface AuditSettings {
  /** The file; '' means no audit trail. */
  readonly path: string;
  /** Rotate before a line would take the file past this size (bytes). */
  readonly maxBytes: number;
  /** Audit reads too (every GET and read tool), not only state-changing calls. */
  readonly reads: boolean;
}

/** Longest text (message, string field) written as is; longer ones are cut. */
export const TEXT_MAX = 300;
const STRING_FIELD_MAX = 64;
const ARRAY_ITEMS_MAX = 8;
const OBJECT_KEYS_MAX = 24;
const SUMMARY_MAX_CHARS = 2048;

/** What a call came to: the status (HTTP, or what the error would be over HTTP), success and message. */
export interface AuditOutcome {
  readonly status: number;
  /** Over MCP: the call was answered with a tool error. */
  readonly tool_error?: boolean;
  readonly success: boolean;
  readonly message?: string;
}

/** What the trail needs of an operation (lib/core/operation.ts's Operation has it). */
export interface AuditedOperation {
  readonly name: string;
  readonly effect: 'read' | 'motion' | 'stop' | 'write';
  /** The same call twice does what it did once (a move to a target): only such a call may repeat while changing. */
  readonly idempotent?: boolean;
  /** Its input schema; none: it takes no input (a stop, which stops whatever it was sent with). */
  readonly input?: unknown;
  readonly rawJson?: boolean;
  /** Its effect lines may be counted past a caller's EFFECT_LINES_MAX a window (lib/core/operation.ts). */
  readonly countedInBursts?: boolean;
  readonly rest?: { readonly files?: Readonly<Record<string, { readonly as: 'json' | 'upload' }>> };
}

/** Who made a call, as the trail names them: the token's name (never the token), its role and the interface. */
export interface AuditedCaller {
  readonly name: string;
  readonly role: string;
  readonly face: AuditInterface;
}

/** One line of the trail. */
export interface AuditRecord {
  readonly time: string;
  readonly principal: string;
  readonly role: string;
  readonly interface: AuditInterface;
  readonly operation: string;
  readonly input?: unknown;
  readonly outcome: AuditOutcome;
  readonly duration_ms: number;
  /** Why the call's kind is counted (lib/audit/quiet.ts): it changed nothing, or its caller's effects are a burst. */
  readonly why?: Counted;
}

/** A text cut to `max` characters. */
export const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}...` : text);

/** A bounded summary of any value: numbers, booleans and short strings kept; arrays and objects cut. */
function summarize(value: unknown, depth: number): unknown {
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value === 'string') return cut(value, STRING_FIELD_MAX);
  if (value instanceof Uint8Array) return { bytes: value.byteLength };
  if (Array.isArray(value)) {
    if (depth >= 3) return `[${value.length} items]`;
    const items = value.slice(0, ARRAY_ITEMS_MAX).map((item) => summarize(item, depth + 1));
    if (value.length > ARRAY_ITEMS_MAX) items.push(`... ${value.length} items in all`);
    return items;
  }
  if (typeof value === 'object') {
    if (depth >= 3) return '{...}';
    const out: Record<string, unknown> = {};
    const keys = Object.keys(value);
    for (const key of keys.slice(0, OBJECT_KEYS_MAX))
      out[cut(key, STRING_FIELD_MAX)] = summarize((value as Record<string, unknown>)[key], depth + 1);
    if (keys.length > OBJECT_KEYS_MAX) out['...'] = `${keys.length} keys in all`;
    return out;
  }
  return typeof value;
}

/**
 * An input already summarized for the trail (made before the call runs: an upload's bytes may be handed to another
 * thread while it runs, which leaves them empty here).
 */
export class InputSummary {
  readonly value: unknown;
  /** The input the operation ran with (validated, numbers sent as strings read), summarized: what tells a repeat. */
  readonly acted: unknown;
  /** The leases given (the arm taken) when the call began ({@link AuditTrail.before}): those given while it ran took the arm. */
  readonly leases: number | undefined;
  constructor(value: unknown, acted: unknown = value, leases?: number) {
    this.value = value;
    this.acted = acted;
    this.leases = leases;
  }
}

/**
 * The input of a call as the trail shows it: files are named and sized, never copied (an upload:
 * its name and bytes; an inline JSON file such as a sequence configuration: its top-level keys and
 * size); a raw JSON body (a trajectory) by its size and point count; everything else bounded.
 */
export function summarizeInput(op: AuditedOperation, input: unknown): unknown {
  if (input instanceof InputSummary) return input.value;
  if (input === undefined) return undefined;
  if (typeof input !== 'object' || input === null) return summarize(input, 0);
  const fields = { ...(input as Record<string, unknown>) };
  if (op.rawJson && typeof fields.text === 'string') {
    const text = fields.text;
    return { body_chars: text.length, points: (text.match(/"positions"/g) ?? []).length };
  }
  for (const [name, part] of Object.entries(op.rest?.files ?? {})) {
    const value = fields[name];
    if (value === undefined) continue;
    if (part.as === 'upload' && typeof value === 'object' && value !== null && 'bytes' in value) {
      const upload = value as { filename?: unknown; bytes?: unknown };
      fields[name] = {
        file: typeof upload.filename === 'string' ? cut(upload.filename, STRING_FIELD_MAX) : '',
        bytes: upload.bytes instanceof Uint8Array ? upload.bytes.byteLength : 0,
      };
    } else {
      const keys = typeof value === 'object' && value !== null ? Object.keys(value).slice(0, OBJECT_KEYS_MAX) : [];
      fields[name] = { json_file: true, keys, chars: JSON.stringify(value)?.length ?? 0 };
    }
  }
  const summary = summarize(fields, 0);
  if (JSON.stringify(summary).length <= SUMMARY_MAX_CHARS) return summary;
  return { fields: Object.keys(fields).slice(0, OBJECT_KEYS_MAX), truncated: true };
}

/** A stop or a pause: brings the arm to rest and takes no input (it stops whatever it was sent with). */
const halts = (op: AuditedOperation) => op.effect === 'stop' && op.input === undefined;

/**
 * A move to a target (an idempotent motion): it takes the arm once, and sent again to where the last one left the arm
 * it moves nothing. The one operation a call of which may take the arm and still be a repeat.
 */
const movesToTarget = (op: AuditedOperation) => op.effect === 'motion' && op.idempotent === true;

/** The refusals' file of an audit trail at `file`: `audit.jsonl` -> `audit.refusals.jsonl` (`audit` -> `audit.refusals`). */
export function refusalsPath(file: string): string {
  const ext = extname(file);
  return ext === '' ? `${file}.refusals` : `${file.slice(0, -ext.length)}.refusals${ext}`;
}

/** The window (ms): what was counted in it (refusals, calls that changed nothing, a burst of effects) is written as
 * summary lines at its end, and each token's effect lines (EFFECT_LINES_MAX) begin again. */
export const REFUSAL_WINDOW_MS = 1000;

/** The audit trail writer (see the module comment). */
export class AuditTrail {
  private readonly settings: AuditSettings;
  private readonly calls: LineFile;
  private readonly refusals: LineFile;
  private readonly counts = new RefusalCounts();
  private readonly quiet = new QuietCounts();
  /** Effects counted beyond a caller's budget of lines per window (written to the calls' file). */
  private readonly burst = new QuietCounts();
  private readonly budget = new EffectBudget();
  private readonly repeats = new Repeats();
  /** How many times the arm was taken (the arbiter's leases), to tell a repeat; absent: the trail's own lines only. */
  private readonly leases: () => number;
  /** Effect lines on the trail but stops' and pauses' (a resume, an override, a save: changes no lease counts). */
  private changes = 0;
  /** Stops' and pauses' lines on the trail (not repeats): a change for every other call (a resume finds the pause). */
  private halts = 0;
  private window: NodeJS.Timeout | undefined;
  private failed = false;

  constructor(settings: AuditSettings, leases: () => number = () => 0) {
    this.settings = settings;
    this.leases = leases;
    const droppedLine = (dropped: number) =>
      `${JSON.stringify({ time: new Date().toISOString(), principal: 'armgate', role: 'none', operation: 'audit_lines_dropped', dropped, outcome: { status: 503, success: false, message: `${dropped} lines were dropped: the audit queue was full` } })}\n`;
    const cutLine = (bytes: number) =>
      `${JSON.stringify({ time: new Date().toISOString(), principal: 'armgate', role: 'none', operation: 'audit_line_cut', bytes, outcome: { status: 500, success: false, message: `the file ended in part of a line (${bytes} bytes: a write cut short by a crash); it was cut back to its last whole line` } })}\n`;
    const onError = (e: unknown) => this.fail(e);
    const files = { maxBytes: settings.maxBytes, droppedLine, cutLine, onError };
    this.calls = new LineFile({ path: settings.path, ...files });
    this.refusals = new LineFile({ path: refusalsPath(settings.path), ...files });
    // Opened at once: a file a crash left ending in part of a line is cut back before anyone reads it.
    this.calls.open();
    this.refusals.open();
  }

  /** Bytes waiting to be written, both files (bounded: lib/audit/line-file.ts's QUEUE_MAX_BYTES each). */
  get queuedBytes(): number {
    return this.calls.queuedBytes + this.refusals.queuedBytes;
  }

  /**
   * The changes so far, as `op` sees them: leases given (lib/control/arbiter.ts) and effect lines on the trail; a stop
   * or a pause does not see the lines of stops and pauses (another token's stop between two of a token's own at rest
   * leaves them repeats), every other operation does (a resume after a pause moves the motion on).
   */
  private changeCount(op: AuditedOperation): number {
    return this.leases() + this.changes + (halts(op) ? 0 : this.halts);
  }

  /**
   * The input of a call about to run, as its line will show it (`input`) and as the operation reads it (`acted`,
   * validated), with the leases given so far: those given while it runs took the arm (see {@link classify}).
   */
  before(op: AuditedOperation, input: unknown, acted: unknown): InputSummary {
    const shown = summarizeInput(op, input);
    const acts = acted === input ? shown : summarizeInput(op, acted);
    return new InputSummary(shown, acts, this.leases());
  }

  /** True when calls of `op` are audited (state-changing ones always, reads with `audit.reads`). */
  wants(op: AuditedOperation): boolean {
    return op.effect !== 'read' || this.settings.reads;
  }

  /**
   * Appends a line for a finished call (queued; never throws: a write failure is logged once on stdout): an effect to
   * the trail's file; a call that changed nothing to the refusals' file, or counted (see the module comment).
   */
  record(op: AuditedOperation, caller: AuditedCaller, startedMs: number, input: unknown, outcome: AuditOutcome): void {
    if (!this.wants(op)) return;
    const summary = summarizeInput(op, input);
    const time = new Date().toISOString();
    const quiet = this.classify(op, caller, input, summary, outcome);
    this.window ??= setTimeout(() => this.endWindow(), REFUSAL_WINDOW_MS).unref();
    const burst = quiet === undefined && op.countedInBursts === true && !this.budget.spend(caller.name);
    const why: Counted | undefined = quiet ?? (burst ? 'burst' : undefined);
    if (why !== undefined) {
      const { name: principal, role, face } = caller;
      const call = { time, principal, role, interface: face, operation: op.name, ...outcome, why };
      if (!(quiet ? this.quiet : this.burst).add(call)) return;
    }
    const line: AuditRecord = {
      time,
      principal: caller.name,
      role: caller.role,
      interface: caller.face,
      operation: op.name,
      ...(summary !== undefined ? { input: summary } : {}),
      outcome,
      duration_ms: Math.round((performance.now() - startedMs) * 100) / 100,
      ...(why !== undefined ? { why } : {}),
    };
    (quiet === undefined ? this.calls : this.refusals).append(`${JSON.stringify(line)}\n`);
  }

  /**
   * Why a call changed nothing (lib/audit/quiet.ts), or undefined for an effect; counts the changes and remembers the
   * caller's last call of the operation (the line is written next).
   */
  private classify(
    op: AuditedOperation,
    caller: AuditedCaller,
    input: unknown,
    summary: unknown,
    outcome: AuditOutcome,
  ): Quiet | undefined {
    const given = input instanceof InputSummary ? input : undefined;
    const acted = given ? given.acted : summary;
    const quiet = quietOf({ effect: op.effect, status: outcome.status, input: acted });
    if (quiet !== undefined) return quiet;
    // Alike: the same outcome of the same input as the operation read it (without input: whatever it was sent with).
    const last = `${caller.name}\n${caller.face}\n${op.name}`;
    const like = JSON.stringify([op.input === undefined ? null : (acted ?? null), outcome]);
    // A repeat succeeded and nothing changed since its caller's last alike call (lib/audit/quiet.ts) but the arm taken
    // while it ran, and that only once and by a move to a target (its own lease: it found the arm where the last one
    // left it). Any other call that took the arm (a trajectory, a sequence, a plan, a step, a jog started) is a line.
    const took = given?.leases === undefined ? 0 : this.leases() - given.leases;
    const repeat =
      outcome.success &&
      took <= (movesToTarget(op) ? 1 : 0) &&
      this.repeats.repeats(last, like, this.changeCount(op) - took);
    if (!repeat) {
      if (halts(op)) this.halts++;
      else this.changes++;
    }
    this.repeats.written(last, like, this.changeCount(op));
    return repeat ? 'repeat' : undefined;
  }

  /**
   * Counts a request refused before it reached an operation (a missing or wrong token, too many wrong ones): the
   * refusals' file gets one line per face, address and reason each {@link REFUSAL_WINDOW_MS} with the count.
   */
  recordRefusal(
    face: AuditInterface,
    address: string,
    method: string,
    path: string,
    status: number,
    reason: string,
  ): void {
    this.counts.add(face, cut(address, 64), cut(`${method} ${path}`, 200), status, cut(reason, TEXT_MAX));
    this.window ??= setTimeout(() => this.endWindow(), REFUSAL_WINDOW_MS).unref();
  }

  /** Resolves once every line recorded so far is on disk (the refusals counted so far written as their lines). */
  async flush(): Promise<void> {
    this.endWindow();
    await Promise.all([this.calls.flush(), this.refusals.flush()]);
  }

  /** Writes what is queued and closes the files. */
  async close(): Promise<void> {
    this.endWindow();
    await Promise.all([this.calls.close(), this.refusals.close()]);
  }

  private endWindow(): void {
    clearTimeout(this.window);
    this.window = undefined;
    for (const line of this.counts.take()) this.refusals.append(`${JSON.stringify(line)}\n`);
    for (const line of this.quiet.take()) this.refusals.append(`${JSON.stringify(line)}\n`);
    for (const line of this.burst.take()) this.calls.append(`${JSON.stringify(line)}\n`);
    this.budget.reset();
  }

  private fail(e: unknown): void {
    if (this.failed) return;
    this.failed = true;
    logLine({
      level: 'error',
      msg: 'audit trail: cannot write',
      path: this.settings.path,
      error: e instanceof Error ? e.message : String(e),
    });
  }
}
