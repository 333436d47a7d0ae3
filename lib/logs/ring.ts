/**
 * The latest log lines of one module, each prefixed with a UTC timestamp (ISO 8601), kept in a
 * ring of fixed capacity: the oldest line goes when a new one comes.
 */
export class LogRing {
  readonly capacity: number;
  private readonly lines: string[] = [];
  private readonly now: () => Date;
  private readonly listeners = new Set<(line: string) => void>();

  constructor(capacity: number, now: () => Date = () => new Date()) {
    this.capacity = capacity;
    this.now = now;
  }

  /** Adds one line per line of `text` (multi-line text is split). */
  push(text: string): void {
    const stamp = this.now().toISOString();
    for (const line of text.split(/\r?\n/)) {
      const stamped = `${stamp} ${line}`;
      this.lines.push(stamped);
      if (this.lines.length > this.capacity) this.lines.shift();
      for (const listener of this.listeners) listener(stamped);
    }
  }

  /** Calls `listener` with each new line as stored (timestamp included); returns the unsubscribe. */
  onLine(listener: (line: string) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** The latest `n` lines, oldest first. */
  latest(n: number): string[] {
    return this.lines.slice(Math.max(0, this.lines.length - n));
  }

  /** Number of lines held. */
  get size(): number {
    return this.lines.length;
  }
}
