/**
 * The audit trail: one JSON line per state-changing call on either face (refused ones included),
 * and per read with `audit.reads`. Lines are appended in order by one writer (a promise queue),
 * each written and flushed to the disk (datasync) before the next; the file is rotated when a line
 * would take it past `audit.max_bytes`. A line names the caller by its token's name, never the
 * token, and carries a bounded summary of the input (numbers and names, no file contents).
 */
import { type FileHandle, open, rename, stat } from 'node:fs/promises';
import { logLine } from '../logs/line.ts';

/** The audit settings (the `audit` block). */
export interface AuditSettings {
  /** The file; '' means no audit trail. */
  readonly path: string;
  /** Rotate before a line would take the file past this size (bytes). */
  readonly maxBytes: number;
  /** Audit reads too (every GET and read tool), not only state-changing calls. */
  readonly reads: boolean;
}

/** Rotated files kept beside the current one: `<path>.1` (newest) .. `<path>.<ROTATED_KEPT>`. */
export const ROTATED_KEPT = 5;
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
  readonly rawJson?: boolean;
  readonly rest?: { readonly files?: Readonly<Record<string, { readonly as: 'json' | 'upload' }>> };
}

/** Who made a call, as the trail names them: the token's name (never the token), its role and the face. */
export interface AuditedCaller {
  readonly name: string;
  readonly role: string;
  readonly face: 'rest' | 'mcp';
}

/** One line of the trail. */
export interface AuditRecord {
  readonly time: string;
  readonly principal: string;
  readonly role: string;
  readonly interface: 'rest' | 'mcp';
  readonly operation: string;
  readonly input?: unknown;
  readonly outcome: AuditOutcome;
  readonly duration_ms: number;
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
 * The input of a call as the trail shows it: files are named and sized, never copied (an upload:
 * its name and bytes; an inline JSON file such as a sequence configuration: its top-level keys and
 * size); a raw JSON body (a trajectory) by its size and point count; everything else bounded.
 */
export function summarizeInput(op: AuditedOperation, input: unknown): unknown {
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

/** The audit trail writer (see the module comment). */
export class AuditTrail {
  private readonly settings: AuditSettings;
  private handle: FileHandle | undefined;
  private size = 0;
  private queue: Promise<void> = Promise.resolve();
  private failed = false;

  constructor(settings: AuditSettings) {
    this.settings = settings;
  }

  /** True when calls of `op` are audited (state-changing ones always, reads with `audit.reads`). */
  wants(op: AuditedOperation): boolean {
    return op.effect !== 'read' || this.settings.reads;
  }

  /** Appends a line for a finished call (queued; never throws: a write failure is logged once on stdout). */
  record(op: AuditedOperation, caller: AuditedCaller, startedMs: number, input: unknown, outcome: AuditOutcome): void {
    if (!this.wants(op)) return;
    const summary = summarizeInput(op, input);
    const line: AuditRecord = {
      time: new Date().toISOString(),
      principal: caller.name,
      role: caller.role,
      interface: caller.face,
      operation: op.name,
      ...(summary !== undefined ? { input: summary } : {}),
      outcome,
      duration_ms: Math.round((performance.now() - startedMs) * 100) / 100,
    };
    const text = `${JSON.stringify(line)}\n`;
    this.queue = this.queue.then(() => this.write(text)).catch((e: unknown) => this.fail(e));
  }

  /** Appends a line for a request refused before it reached an operation (a missing or wrong token). */
  recordUnauthenticated(face: 'rest' | 'mcp', method: string, path: string, detail: string): void {
    const line: AuditRecord = {
      time: new Date().toISOString(),
      principal: 'anonymous',
      role: 'none',
      interface: face,
      operation: cut(`${method} ${path}`, 200),
      outcome: { status: 401, success: false, message: cut(detail, TEXT_MAX) },
      duration_ms: 0,
    };
    const text = `${JSON.stringify(line)}\n`;
    this.queue = this.queue.then(() => this.write(text)).catch((e: unknown) => this.fail(e));
  }

  /** Resolves once every line recorded so far is on disk. */
  flush(): Promise<void> {
    return this.queue;
  }

  /** Writes what is queued and closes the file. */
  async close(): Promise<void> {
    await this.queue;
    await this.handle?.close();
    this.handle = undefined;
  }

  private async write(text: string): Promise<void> {
    const bytes = Buffer.byteLength(text);
    if (!this.handle) await this.openFile();
    if (this.size > 0 && this.size + bytes > this.settings.maxBytes) await this.rotate();
    const handle = this.handle as FileHandle;
    await handle.appendFile(text);
    await handle.datasync();
    this.size += bytes;
  }

  private async openFile(): Promise<void> {
    this.handle = await open(this.settings.path, 'a', 0o600);
    this.size = (await this.handle.stat()).size;
  }

  /** `<path>` becomes `<path>.1`, the older ones move up one, the oldest beyond {@link ROTATED_KEPT} is replaced. */
  private async rotate(): Promise<void> {
    await this.handle?.close();
    this.handle = undefined;
    const base = this.settings.path;
    for (let k = ROTATED_KEPT - 1; k >= 1; k--) {
      const from = `${base}.${k}`;
      if (await exists(from)) await rename(from, `${base}.${k + 1}`);
    }
    await rename(base, `${base}.1`);
    await this.openFile();
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

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}
