/**
 * The taught positions of one app, kept in memory and in their YAML file (armgate.positions_file). Changes are
 * serialized: each one waits for the one before, writes the whole file atomically (lib/positions/atomic-file.ts) and
 * only then takes effect in memory, so concurrent saves of different names are all kept, and a write that fails leaves
 * both the file and the list as they were.
 */
import { type AtomicFs, replaceFile } from './atomic-file.ts';
import { MAX_TAUGHT_POSITIONS, positionsFileText, type TaughtPosition } from './taught.ts';
import { err, ok, type Result } from '../result.ts';

/** Why a change was not made. */
export type PositionChangeError =
  | { readonly kind: 'full'; readonly detail: string }
  | { readonly kind: 'not_found'; readonly detail: string }
  | { readonly kind: 'io'; readonly detail: string };

/** Options of the store (tests inject the file system's rename). */
export interface PositionStoreOptions {
  readonly fs?: AtomicFs;
  readonly max?: number;
}

/** The taught positions and their file (see the module comment). */
export class PositionStore {
  readonly file: string;
  private readonly jointNames: readonly string[];
  private readonly fs: AtomicFs | undefined;
  private readonly max: number;
  private positions: ReadonlyMap<string, TaughtPosition>;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    file: string,
    jointNames: readonly string[],
    initial: readonly TaughtPosition[],
    options: PositionStoreOptions = {},
  ) {
    this.file = file;
    this.jointNames = jointNames;
    this.fs = options.fs;
    this.max = options.max ?? MAX_TAUGHT_POSITIONS;
    this.positions = new Map(initial.map((p) => [p.name, p]));
  }

  /** The taught positions, by name. */
  list(): readonly TaughtPosition[] {
    return [...this.positions.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** The taught position of that name, if any. */
  get(name: string): TaughtPosition | undefined {
    return this.positions.get(name);
  }

  /** Saves `position` (a new name, or over the one of that name); `created` is false when it replaced one. */
  save(position: TaughtPosition): Promise<Result<{ readonly created: boolean }, PositionChangeError>> {
    return this.change((current) => {
      const created = !current.has(position.name);
      if (created && current.size >= this.max)
        return err({
          kind: 'full',
          detail: `${current.size} positions are taught, the most armgate keeps (${this.max}): delete one first`,
        });
      const next = new Map(current);
      next.set(position.name, position);
      return ok({ next, value: { created } });
    });
  }

  /** Removes the taught position `name`; not_found when there is none. */
  delete(name: string): Promise<Result<TaughtPosition, PositionChangeError>> {
    return this.change((current) => {
      const found = current.get(name);
      if (!found) return err({ kind: 'not_found', detail: `no taught position '${name}'` });
      const next = new Map(current);
      next.delete(name);
      return ok({ next, value: found });
    });
  }

  /** Waits for every change in progress (tests, shutdown). */
  async settled(): Promise<void> {
    await this.queue.catch(() => undefined);
  }

  /** One change, after the ones before it: the new set is written, then kept. */
  private change<T>(
    make: (
      current: ReadonlyMap<string, TaughtPosition>,
    ) => Result<{ next: Map<string, TaughtPosition>; value: T }, PositionChangeError>,
  ): Promise<Result<T, PositionChangeError>> {
    const run = async (): Promise<Result<T, PositionChangeError>> => {
      const made = make(this.positions);
      if (!made.ok) return made;
      try {
        await replaceFile(this.file, positionsFileText(made.value.next.values(), this.jointNames), this.fs);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        return err({
          kind: 'io',
          detail: `the positions file '${this.file}' could not be written (${code ?? (e as Error).message}); nothing changed`,
        });
      }
      this.positions = made.value.next;
      return ok(made.value.value);
    };
    const next = this.queue.then(run, run);
    this.queue = next;
    return next;
  }
}
