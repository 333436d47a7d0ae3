/**
 * Seeded JSON texts for the differential tests of lib/body/sliced-json.ts against JSON.parse: documents written as
 * text (so that the spellings JSON.parse reads alike are all met: every escape, every whitespace, numbers at the edges,
 * duplicate keys, `__proto__`), and a comparison of two parsed values stricter than deepStrictEqual (key order, -0,
 * own `__proto__` keys, property attributes).
 */
import assert from 'node:assert/strict';

export { seededRandom as seeded } from '../../lib/random.ts';

/** Numbers as JSON spells them, at the edges of doubles and of the grammar. */
export const NUMBERS = [
  '0',
  '-0',
  '-0.0',
  '0e0',
  '-0E-0',
  '1e-100',
  '5e-324',
  '4.9e-324',
  '2e-324',
  '1.7976931348623157e308',
  '-1.7976931348623157e308',
  '1e400',
  '-1e400',
  '0.1e1',
  '1E+2',
  '1e-2',
  '2.5E-3',
  '12345678901234567890123',
  '-9007199254740993',
  '9007199254740992',
  '0.30000000000000004',
  '123.456e7',
  '-1.5',
];

/** Pieces of a string's body: every escape JSON has, surrogate pairs and lone ones, and the characters the pass reads. */
export const STRING_PARTS = [
  'a',
  'xyz',
  '\\"',
  '\\\\',
  '\\/',
  '\\b',
  '\\f',
  '\\n',
  '\\r',
  '\\t',
  '\\u00e9',
  '\\u00E9',
  '\\ud83d\\ude00',
  '\\uD83D\\uDE00',
  '\\ud800',
  '\\udc00',
  '\\u0000',
  '\\u0022',
  '\\u005c',
  '\\u005C\\u0022',
  'é',
  '😀',
  '\ud800',
  '\udfff',
  ']',
  '}',
  ',',
  ':',
  '[',
  '{',
  ' ',
  "'",
  '\u007f',
  '\u2028',
  '\\\\\\"',
];

/** Keys, few enough to meet again (duplicates), with spellings that read alike (`a\u0062` is `ab`). */
export const KEYS = [
  '"a"',
  '"b"',
  '"ab"',
  '"a\\u0062"',
  '"__proto__"',
  '"__pro\\u0074o__"',
  '"constructor"',
  '"toString"',
  '"0"',
  '"1"',
  '"10"',
  '"-1"',
  '"4294967295"',
  '""',
  '"\\ud800"',
  '"joints"',
  '"j\\u006fints"',
];

const WHITESPACE = [' ', '\t', '\n', '\r'];

export interface Shape {
  /** Deepest nesting of containers. */
  readonly depth: number;
  /** Most items of a container. */
  readonly width: number;
  /** Chance that a string is long (hundreds to thousands of parts). */
  readonly longStrings: number;
}

/** A JSON text written with `random`: whitespace of the four kinds around every token, now and then. */
export function jsonText(random: () => number, shape: Shape): string {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const ws = () => {
    if (random() < 0.6) return '';
    let s = '';
    for (let n = 1 + Math.floor(random() * 3); n > 0; n--) s += pick(WHITESPACE);
    return s;
  };
  const string = () => {
    const parts = random() < shape.longStrings ? 200 + Math.floor(random() * 3000) : Math.floor(random() * 6);
    let s = '"';
    for (let n = 0; n < parts; n++) s += pick(STRING_PARTS);
    return `${s}"`;
  };
  const value = (depth: number): string => {
    const r = random();
    if (depth < shape.depth && r < 0.35) {
      const n = random() < 0.2 ? 0 : Math.floor(random() * shape.width);
      const items = Array.from({ length: n }, () => `${ws()}${value(depth + 1)}${ws()}`);
      return n === 0 ? `[${ws()}]` : `[${items.join(',')}]`;
    }
    if (depth < shape.depth && r < 0.7) {
      const n = random() < 0.2 ? 0 : Math.floor(random() * shape.width);
      const members = Array.from({ length: n }, () => `${ws()}${pick(KEYS)}${ws()}:${ws()}${value(depth + 1)}${ws()}`);
      return n === 0 ? `{${ws()}}` : `{${members.join(',')}}`;
    }
    if (r < 0.82) return pick(NUMBERS);
    if (r < 0.95) return string();
    return pick(['true', 'false', 'null', '""', '[]', '{}']);
  };
  return `${ws()}${value(0)}${ws()}`;
}

/**
 * Asserts that `actual` is `expected` as JSON.parse makes it: the same types and prototypes, numbers by Object.is
 * (-0 is not 0), arrays by their items, objects by their own keys in the same order (`__proto__` included) with the
 * same attributes and values.
 */
export function assertSameJson(actual: unknown, expected: unknown, where: string, path = '$'): void {
  // Compared by hand, and asserted (with its message) only where they differ: this runs for every value of every text
  // of tests/http/json-differential, thousands of times each.
  if (typeof expected !== 'object' || expected === null) {
    if (!Object.is(actual, expected))
      assert.fail(`${where}: ${path} is ${String(actual)}, JSON.parse gives ${String(expected)}`);
    return;
  }
  if (typeof actual !== 'object' || actual === null) assert.fail(`${where}: ${path} is not an object`);
  if (Array.isArray(actual) !== Array.isArray(expected))
    assert.equal(Array.isArray(actual), Array.isArray(expected), `${where}: ${path} array or not`);
  if (Object.getPrototypeOf(actual) !== Object.getPrototypeOf(expected))
    assert.equal(Object.getPrototypeOf(actual), Object.getPrototypeOf(expected), `${where}: ${path} prototype`);
  const keys = Reflect.ownKeys(expected);
  const actualKeys = Reflect.ownKeys(actual);
  if (actualKeys.length !== keys.length || actualKeys.some((key, i) => key !== keys[i]))
    assert.deepEqual(actualKeys, keys, `${where}: ${path} keys (in order)`);
  for (const key of keys) {
    const a = Object.getOwnPropertyDescriptor(actual, key) as PropertyDescriptor;
    const e = Object.getOwnPropertyDescriptor(expected, key) as PropertyDescriptor;
    if (
      a.writable !== e.writable ||
      a.enumerable !== e.enumerable ||
      a.configurable !== e.configurable ||
      'get' in a !== 'get' in e
    )
      assert.deepEqual(
        [a.writable, a.enumerable, a.configurable, 'get' in a],
        [e.writable, e.enumerable, e.configurable, 'get' in e],
        `${where}: ${path}.${String(key)} attributes`,
      );
    assertSameJson(a.value, e.value, where, `${path}.${String(key)}`);
  }
}

/** JSON.parse's value of `text`, or its SyntaxError. */
export function native(text: string): { value: unknown } | { error: SyntaxError } {
  try {
    return { value: JSON.parse(text) };
  } catch (e) {
    return { error: e as SyntaxError };
  }
}

/** The message of JSON.parse's SyntaxError for `text` (which it must refuse). */
export function nativeMessage(text: string): string {
  const parsed = native(text);
  if ('value' in parsed) throw new Error(`JSON.parse took ${text.slice(0, 40)}`);
  return parsed.error.message;
}

/** Objects of a key of their own each, `[{"a0":0},{"a1":1},...]`, as many as fit in `bytes` (what JSON.parse is slowest on). */
export function distinctObjects(bytes: number): string {
  const parts: string[] = [];
  for (let i = 0, size = 0; ; i++) {
    const part = `{"a${i}":${i}}`;
    if (size + part.length + 1 > bytes) break;
    parts.push(part);
    size += part.length + 1;
  }
  return `[${parts.join(',')}]`;
}
