/**
 * A Foxglove connection's text messages parsed in the order they came, a large one (16 KiB or more: a frame may hold
 * 1 MiB) a slice per turn of the event loop (lib/body/parse-json.ts), so that a stop sent meanwhile on any connection
 * waits for one slice, not the whole JSON.parse. A message that comes while an earlier one of its connection is still
 * parsed waits for it; a small one otherwise is parsed and handled at once, as before.
 */
import { parseJson } from '../body/parse-json.ts';
import { NATIVE_CHARS } from '../body/sliced-json.ts';

export class TextsInOrder<K extends object> {
  /** Per connection: its text messages still parsed or waiting, the last one's end. */
  readonly #waiting = new WeakMap<K, Promise<void>>();
  /** Told of an error thrown by the handler of a message handled later (one handled at once throws to the caller). */
  readonly #failed: (key: K, error: unknown) => void;

  constructor(failed: (key: K, error: unknown) => void) {
    this.#failed = failed;
  }

  /** Hands `handle` the message's JSON value, or undefined when it is not JSON, after the connection's earlier ones. */
  read(key: K, text: string, handle: (message: unknown) => void): void {
    const before = this.#waiting.get(key);
    if (!before && text.length < NATIVE_CHARS) {
      let message: unknown;
      try {
        message = JSON.parse(text);
      } catch {
        message = undefined;
      }
      handle(message);
      return;
    }
    const parsed = (before ?? Promise.resolve()).then(() => parseJson(text).catch(() => undefined));
    const done = parsed.then(handle).catch((e: unknown) => this.#failed(key, e));
    this.#waiting.set(key, done);
    void done.then(() => {
      if (this.#waiting.get(key) === done) this.#waiting.delete(key);
    });
  }
}
