/**
 * JSON.parse of a large text a slice per turn of the event loop: what a POST /stop sent meanwhile waits for is one
 * slice, not the whole parse (JSON.parse of 2 MiB of objects with distinct keys holds the loop ~160 ms).
 *
 * One pass over the text follows its structure (arrays, objects, their separators) with a stack; every piece of it
 * shorter than `nativeChars` (a value, or a container as a whole) is parsed by JSON.parse itself, and a larger
 * container is built from its parsed pieces. Each character is parsed natively once. A slice is a budget of work
 * counted in characters, scanned or parsed (as lib/net/message-budget.ts counts messages: no clock); once it is spent,
 * the parse waits for the next turn of the event loop. The result is JSON.parse's: the same values, keys in the
 * same order (a duplicate key keeps its first place and its last value; `__proto__` an own property); a text JSON.parse
 * refuses is refused (a SyntaxError), as is one nested deeper than {@link MAX_DEPTH} in its large containers.
 */

/** Pieces shorter than this are handed to JSON.parse whole (at worst ~1.3 ms: 16 KiB of distinct keys). */
export const NATIVE_CHARS = 16 * 1024;
/**
 * Characters of work a slice may take: scanned, and handed to JSON.parse (at worst ~2.5 ms: 32 KiB of distinct keys;
 * the scan costs ~2 ms a MiB).
 */
export const CHARS_PER_TURN = 32 * 1024;
/** What one piece handed to JSON.parse costs besides its characters (the call, the slice of the text), in characters. */
const PIECE_CHARS = 64;
/** Deepest nesting of containers larger than {@link NATIVE_CHARS} (each is a frame of the pass). */
export const MAX_DEPTH = 256;

export interface SlicedOptions {
  readonly nativeChars?: number;
  readonly charsPerTurn?: number;
  /** Waits for the next turn (setImmediate); tests count the waits. */
  readonly pause?: () => Promise<void>;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A piece of the text not parsed yet (`start` to `end`), or a large container already built (`value`). */
interface Piece {
  readonly start: number;
  readonly end: number;
  readonly built: boolean;
  readonly value?: unknown;
}

/** A container the pass is in: where it opened, its pieces (an object's: keys and values, alternating). */
interface Frame {
  readonly open: number;
  readonly object: boolean;
  readonly pieces: Piece[];
}

/** What the pass expects next. */
const VALUE = 0;
const VALUE_OR_CLOSE = 1;
const KEY = 2;
const KEY_OR_CLOSE = 3;
const COLON = 4;
const COMMA_OR_CLOSE = 5;
const END = 6;

const isSpace = (c: number) => c === 32 || c === 10 || c === 13 || c === 9;
/** Characters that end a number or a literal (true, false, null). */
const ends = (c: number) => isSpace(c) || c === 44 || c === 93 || c === 125 || c === 58;

const refuse = (at: number, what: string) => new SyntaxError(`${what} in JSON at position ${at}`);

/** The index just past the string that opens at `at` (its escapes are JSON.parse's to check). */
function stringEnd(text: string, at: number): number {
  for (let i = at + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) return i + 1;
    if (c === 92) i++;
  }
  throw refuse(at, 'Unterminated string');
}

/**
 * The index just past the container that opens at `at` when it is shorter than `nativeChars` (brackets of either
 * kind counted, strings skipped: a text that does not pair them is JSON.parse's to refuse), else undefined.
 */
function smallContainerEnd(text: string, at: number, nativeChars: number): number | undefined {
  const last = Math.min(text.length, at + nativeChars - 1);
  let depth = 0;
  for (let i = at; i < last; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      i = stringEnd(text, i) - 1;
    } else if (c === 91 || c === 123) depth++;
    else if ((c === 93 || c === 125) && --depth === 0) return i + 1;
  }
  return undefined;
}

/** Parses `text` as JSON.parse does, a slice per turn of the event loop (see the module's comment). */
export async function parseJsonSliced(text: string, options: SlicedOptions = {}): Promise<unknown> {
  const nativeChars = options.nativeChars ?? NATIVE_CHARS;
  const charsPerTurn = options.charsPerTurn ?? CHARS_PER_TURN;
  const pause = options.pause ?? nextTurn;
  if (text.length < nativeChars) return JSON.parse(text);
  /** The work done in this turn, in characters. */
  let work = 0;
  /** Waits for the next turn once this slice's work is done. */
  const maybePause = async () => {
    if (work < charsPerTurn) return;
    await pause();
    work = 0;
  };
  const parsed = (piece: Piece) => {
    if (piece.built) return piece.value;
    work += piece.end - piece.start + PIECE_CHARS;
    return JSON.parse(text.slice(piece.start, piece.end));
  };
  /** A large container made from its pieces. */
  const build = async (frame: Frame): Promise<unknown> => {
    const pieces = frame.pieces;
    if (!frame.object) {
      const array: unknown[] = new Array(pieces.length);
      for (let k = 0; k < pieces.length; k++) {
        array[k] = parsed(pieces[k] as Piece);
        if (work >= charsPerTurn) await maybePause();
      }
      return array;
    }
    const object: Record<string, unknown> = {};
    for (let k = 0; k + 1 < pieces.length; k += 2) {
      const key = parsed(pieces[k] as Piece) as string;
      const value = parsed(pieces[k + 1] as Piece);
      if (key === '__proto__')
        Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
      else object[key] = value;
      if (work >= charsPerTurn) await maybePause();
    }
    return object;
  };

  const stack: Frame[] = [];
  let top: Piece | undefined;
  let expect = VALUE;
  /** Adds a finished piece to the container it is in, or makes it the whole text's. */
  const add = (piece: Piece) => {
    const frame = stack[stack.length - 1];
    if (frame) {
      frame.pieces.push(piece);
      expect = COMMA_OR_CLOSE;
    } else {
      top = piece;
      expect = END;
    }
  };
  /** Where the scan was when its work was last counted. */
  let counted = 0;
  for (let i = 0; i < text.length; i++) {
    if (i - counted >= 4096) {
      work += i - counted;
      counted = i;
      if (work >= charsPerTurn) await maybePause();
    }
    const c = text.charCodeAt(i);
    if (isSpace(c)) continue;
    const frame = stack[stack.length - 1];
    if (expect === END) throw refuse(i, 'Unexpected non-whitespace character after JSON');
    if (expect === COLON) {
      if (c !== 58) throw refuse(i, "Expected ':'");
      expect = VALUE;
      continue;
    }
    if (expect === KEY || expect === KEY_OR_CLOSE) {
      if (c === 34) {
        const end = stringEnd(text, i);
        frame?.pieces.push({ start: i, end, built: false });
        expect = COLON;
        i = end - 1;
        continue;
      }
      if (c !== 125 || expect !== KEY_OR_CLOSE) throw refuse(i, 'Expected a property name');
    } else if (expect === COMMA_OR_CLOSE) {
      if (c === 44) {
        expect = frame?.object ? KEY : VALUE;
        continue;
      }
      if (c !== (frame?.object ? 125 : 93)) throw refuse(i, "Expected ',' or the container's end");
    } else if (c === 91 || c === 123) {
      if (stack.length >= MAX_DEPTH) {
        // No frame deeper: a small container here is a piece of its own (JSON.parse judges it), a large one refused.
        const end = smallContainerEnd(text, i, nativeChars);
        if (end === undefined) throw refuse(i, 'Nested too deep');
        add({ start: i, end, built: false });
        i = end - 1;
        continue;
      }
      stack.push({ open: i, object: c === 123, pieces: [] });
      expect = c === 123 ? KEY_OR_CLOSE : VALUE_OR_CLOSE;
      continue;
    } else if (c !== 93 || expect !== VALUE_OR_CLOSE) {
      // A string, a number or a literal: JSON.parse judges it.
      let end = i + 1;
      if (c === 34) end = stringEnd(text, i);
      else {
        if (ends(c) || c === 93 || c === 125) throw refuse(i, 'Unexpected token');
        while (end < text.length && !ends(text.charCodeAt(end))) end++;
      }
      add({ start: i, end, built: false });
      i = end - 1;
      continue;
    }
    // The end of the container in `frame`: a small one is parsed whole, a large one built from its pieces.
    const closed = stack.pop() as Frame;
    const end = i + 1;
    add(
      end - closed.open < nativeChars
        ? { start: closed.open, end, built: false }
        : { start: closed.open, end, built: true, value: await build(closed) },
    );
  }
  if (!top || stack.length > 0) throw refuse(text.length, 'Unexpected end');
  return parsed(top);
}
