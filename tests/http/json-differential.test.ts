/**
 * lib/body/sliced-json.ts and lib/body/parse-json.ts against JSON.parse, on seeded texts (the same at every run): every
 * text JSON.parse takes gives the same value (key order, -0, duplicate keys last-wins in their first place, `__proto__`
 * an own key, every escape), with every threshold of the pieces handed to JSON.parse over small texts and small slices
 * over large ones; every text JSON.parse refuses is refused (never a value), and parseJson refuses it with
 * JSON.parse's own message. Slices wait on a counted promise, not on the event loop's turns: nothing timed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseJson } from '../../lib/body/parse-json.ts';
import { MAX_DEPTH, NATIVE_CHARS, parseJsonSliced, type SlicedOptions } from '../../lib/body/sliced-json.ts';
import { assertSameJson, jsonText, KEYS, NUMBERS, native, STRING_PARTS, seeded } from '../support/json-texts.ts';

/** Waits of the slices counted, and nothing waited for but a resolved promise (the one: no promise made a wait). */
let waits = 0;
const RESOLVED = Promise.resolve();
const pause = () => {
  waits++;
  return RESOLVED;
};

/**
 * The most containers of `nativeChars` characters or more nested in one another in a valid JSON text (those the slices
 * build from their pieces, each a frame of the pass: more than MAX_DEPTH of them is what the slices may refuse).
 */
function largeDepthOf(text: string, nativeChars: number): number {
  const open: { at: number; inner: number }[] = [];
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') for (i++; text[i] !== '"'; i++) if (text[i] === '\\') i++;
    if (c === '[' || c === '{') open.push({ at: i, inner: 0 });
    if (c === ']' || c === '}') {
      const closed = open.pop() as { at: number; inner: number };
      const depth = closed.inner + (i + 1 - closed.at >= nativeChars ? 1 : 0);
      const parent = open[open.length - 1];
      if (parent) parent.inner = Math.max(parent.inner, depth);
      else deepest = Math.max(deepest, depth);
    }
  }
  return deepest;
}

/**
 * JSON.parse's verdict on `text` (tests/support/json-texts.ts, native), kept for the last text asked: each text is
 * checked with many thresholds and slices in a row, and JSON.parse gave the same verdict every time (up to ~300 times
 * a text).
 */
let lastVerdict: { text: string; verdict: ReturnType<typeof native> } | undefined;
function verdictOf(text: string): ReturnType<typeof native> {
  if (lastVerdict?.text !== text) lastVerdict = { text, verdict: native(text) };
  return lastVerdict.verdict;
}

/** Asserts parseJsonSliced(text, options) gives JSON.parse's value, or is refused when JSON.parse refuses it. */
async function agrees(text: string, options: SlicedOptions, where = text.slice(0, 60)): Promise<void> {
  const expected = verdictOf(text);
  const label = `${where} (pieces under ${options.nativeChars}, slices of ${options.charsPerTurn})`;
  let actual: { value: unknown } | { error: unknown };
  try {
    actual = { value: await parseJsonSliced(text, { pause, ...options }) };
  } catch (error) {
    actual = { error };
  }
  if ('error' in expected) {
    assert.ok(
      'error' in actual,
      `JSON.parse refuses ${JSON.stringify(text.slice(0, 80))} but the slices took it: ${label}`,
    );
    assert.ok(actual.error instanceof SyntaxError, `${label}: refused with ${String(actual.error)}`);
    return;
  }
  if ('error' in actual) {
    // The only text JSON.parse takes and the slices refuse: more than MAX_DEPTH large containers nested (sliced-json's
    // comment; parseJson then asks JSON.parse).
    const depth = largeDepthOf(text, options.nativeChars ?? NATIVE_CHARS);
    assert.ok(depth > MAX_DEPTH, `${label}: JSON.parse takes it, the slices refused: ${String(actual.error)}`);
    return;
  }
  assertSameJson(actual.value, expected.value, label);
}

/** Asserts parseJson(text, options) gives JSON.parse's value, or its SyntaxError with the same message. */
async function parseJsonAgrees(text: string, options: SlicedOptions): Promise<void> {
  const expected = verdictOf(text);
  const where = `${JSON.stringify(text.slice(0, 80))} (pieces under ${options.nativeChars})`;
  if ('value' in expected) {
    assertSameJson(await parseJson(text, { pause, ...options }), expected.value, where);
    return;
  }
  await assert.rejects(parseJson(text, { pause, ...options }), (e: unknown) => {
    assert.ok(e instanceof SyntaxError, `${where}: ${String(e)}`);
    assert.equal(e.message, expected.error.message, where);
    return true;
  });
}

/** A valid text of every kind of token, to be cut, flipped and added to. */
const SAMPLE =
  ' {"a" :[1,-0,0.1e1 ,1E+2,5e-324,"x\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00",true,false,null,[],{},""],\t"__proto__":{"b":{}},"a":{"":[[]]},"n":-1.5e-3}\r\n';

/** What a single character of the sample is replaced by, or put before. */
const FLIPS = [
  '"',
  '\\',
  ',',
  ':',
  '[',
  ']',
  '{',
  '}',
  ' ',
  'x',
  '0',
  '-',
  '.',
  'e',
  '+',
  '\u0000',
  '\u001f',
  '\ud800',
  'n',
  '\ufeff',
  '/',
  "'",
];

/** Texts JSON.parse refuses (or, some of them, takes: raw lone surrogates, whitespace it knows), to embed anywhere. */
const FAULTS = [
  '',
  'NaN',
  '-NaN',
  'Infinity',
  '-Infinity',
  '[1,]',
  '{"a":1,}',
  '[1,,2]',
  '{"a":1,,"b":2}',
  '[,]',
  '{,}',
  '{"a"}',
  "'single'",
  "{'a':1}",
  '/* comment */ 1',
  '[1 // comment\n]',
  '+1',
  '.5',
  '1.',
  '01',
  '-',
  '1e',
  '1e+',
  '0x10',
  '-01',
  '1.e3',
  '"\\u12"',
  '"\\u12G4"',
  '"\\x41"',
  '"\\U0041"',
  '"\\a"',
  '"\\',
  '"\\"',
  'True',
  'nul',
  'nulll',
  'undefined',
  '\ufeff1',
  '\u00a01',
  '1\u00a0',
  '\u20281',
  '\u000b1',
  '\u000c1',
  '"\ud800"',
  '"\udc00\ud800"',
  '"a\u0000"',
  '"\u001f"',
  '"\u007f"',
  '"\n"',
  '"\t"',
  '{"a":1}}',
  '[1]]',
  '[[1]',
  '{"a":{"b":1}',
  '[1:2]',
  '{"a",1}',
  '{1:1}',
  '{"a":1 "b":2}',
  '["a" "b"]',
  '1 2',
  '[1]x',
  '{} []',
];

describe('sliced JSON against JSON.parse', () => {
  it('small texts: the same values with every threshold of the pieces parsed natively', async () => {
    const random = seeded(0x5eed);
    for (let n = 0; n < 300; n++) {
      const text = jsonText(random, { depth: 4, width: 5, longStrings: 0 });
      if (text.length > 300) continue;
      assert.ok('value' in native(text), text);
      for (let nativeChars = 1; nativeChars <= text.length + 1; nativeChars++)
        await agrees(text, { nativeChars, charsPerTurn: 1 + (nativeChars % 13) });
    }
  });

  it('every number spelling, string part and key, alone and in containers, with pieces of one character up', async () => {
    const texts = [
      ...NUMBERS,
      ...NUMBERS.map((n) => `[${n}]`),
      `[${NUMBERS.join(',')}]`,
      ...STRING_PARTS.map((s) => `"${s}"`),
      `"${STRING_PARTS.join('')}"`,
      ...KEYS.map((k) => `{${k}:1,"z":2,${k}:-0}`),
      `{${KEYS.map((k, i) => `${k}:${i}`).join(',')},${KEYS.map((k, i) => `${k}:[${-i}]`).join(',')}}`,
      ` \t\n\r{ \t\n\r"a" \t\n\r: \t\n\r[ \t\n\r1 \t\n\r, \t\n\r"b" \t\n\r] \t\n\r} \t\n\r`,
    ];
    for (const text of texts)
      for (const nativeChars of [1, 2, 3, 4, 5, 8, 16, 1_000_000]) await agrees(text, { nativeChars, charsPerTurn: 3 });
  });

  it('large texts (over NATIVE_CHARS): the same values in small slices, long strings of every escape', async () => {
    const random = seeded(0xb16);
    let large = 0;
    for (let n = 0; large < 24 && n < 400; n++) {
      const text = jsonText(random, { depth: 5, width: 12, longStrings: 0.08 });
      if (text.length < NATIVE_CHARS) continue;
      large++;
      assert.ok('value' in native(text), text.slice(0, 80));
      waits = 0;
      for (const nativeChars of [NATIVE_CHARS, 64, 1024, text.length - 1, text.length, text.length + 1])
        await agrees(text, { nativeChars, charsPerTurn: 512 });
      assert.ok(waits > 0, 'the large texts are parsed in slices');
    }
    assert.equal(large, 24);
  });

  it('pieces as long as the threshold, one less and one more, empty ones at their edges', async () => {
    for (const size of [NATIVE_CHARS, 100]) {
      const str = (length: number) => `"${'\\n'.repeat(Math.floor((length - 2) / 2))}${'x'.repeat((length - 2) % 2)}"`;
      const arr = (length: number) => `[${str(length - 2)}]`;
      const obj = (length: number) => `{"":${str(length - 5)}}`;
      const pieces: string[] = [];
      for (const make of [str, arr, obj])
        for (const length of [size - 2, size - 1, size, size + 1, size + 2]) {
          assert.equal(make(length).length, length);
          pieces.push(make(length), '[]', '{}', '""');
        }
      const text = `[[],${pieces.join(',')},{"k":[${pieces.join(',')}],"":{}},""]`;
      for (const nativeChars of [size - 1, size, size + 1])
        for (const charsPerTurn of [1, size - 1, size, size + 1]) await agrees(text, { nativeChars, charsPerTurn });
      for (const nativeChars of [size - 1, size, size + 1]) await parseJsonAgrees(text, { nativeChars });
    }
  });

  it(`a small value nested deeper than ${MAX_DEPTH} in a large text is JSON.parse's (it was refused)`, async () => {
    const deep = `${'['.repeat(MAX_DEPTH + 1)}${']'.repeat(MAX_DEPTH + 1)}`;
    const text = `[${'0,'.repeat(NATIVE_CHARS / 2)}${deep}]`;
    assert.deepStrictEqual(await parseJsonSliced(text), JSON.parse(text));
  });

  it(`nesting around ${MAX_DEPTH}: JSON.parse's values; parseJson takes what JSON.parse takes`, async () => {
    for (let depth = MAX_DEPTH - 2; depth <= MAX_DEPTH + 2; depth++) {
      const arrays = `${'['.repeat(depth)}${']'.repeat(depth)}`;
      const objects = `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
      const mixed = `${'[{"__proto__":'.repeat(depth / 2)}-0${'}]'.repeat(depth / 2)}`;
      const large = (inner: string) => `[${'"pad",'.repeat(NATIVE_CHARS / 6)}${inner}]`;
      for (const text of [arrays, objects, mixed, large(arrays), large(objects)]) {
        for (const nativeChars of [1, 64, NATIVE_CHARS]) await agrees(text, { nativeChars, charsPerTurn: 256 });
        await parseJsonAgrees(text, { nativeChars: 1 });
        await parseJsonAgrees(text, {});
      }
      // Unclosed at every depth: refused.
      await agrees(arrays.slice(0, -1), { nativeChars: 1 });
      await parseJsonAgrees(`${arrays}]`, { nativeChars: 1 });
    }
  });

  it('the sample cut at every position, every character flipped, characters put in: refused as JSON.parse refuses', async () => {
    const texts = new Set<string>();
    for (let i = 0; i <= SAMPLE.length; i++) {
      texts.add(SAMPLE.slice(0, i));
      texts.add(SAMPLE.slice(0, i) + SAMPLE.slice(i + 1));
      for (const flip of FLIPS) {
        texts.add(SAMPLE.slice(0, i) + flip + SAMPLE.slice(i + 1));
        texts.add(SAMPLE.slice(0, i) + flip + SAMPLE.slice(i));
      }
    }
    let refused = 0;
    const messages: Promise<void>[] = [];
    for (const text of texts) {
      if ('error' in verdictOf(text)) refused++;
      for (const nativeChars of [1, 17]) await agrees(text, { nativeChars, charsPerTurn: 5 });
      // JSON.parse's messages, asked of the verdict thread while the next texts are parsed here.
      messages.push(parseJsonAgrees(text, { nativeChars: 1 + (text.length % 5) }));
    }
    await Promise.all(messages);
    assert.ok(refused > texts.size / 2, `${refused} of ${texts.size} texts refused by JSON.parse`);
  });

  it('faults alone, and at the start, middle and end of a large text: refused with JSON.parse message', async () => {
    const pad = `[${Array.from({ length: 720 }, (_, i) => `{"a${i}":[${i},"\\u00e9"]}`).join(',')}]`;
    assert.ok(pad.length > NATIVE_CHARS);
    const messages: Promise<void>[] = [];
    for (const fault of FAULTS) {
      const texts = [
        fault,
        `[${fault}]`,
        `{"a":${fault}}`,
        `${fault}${pad}`,
        `${pad}${fault}`,
        `[${fault},${pad}]`,
        `[${pad},${fault}]`,
        `{"pad":${pad},"x":${fault}}`,
        `{"pad":${pad.replace('{"a700":', `{"a700":${fault},"b":`)}}`,
        `{"pad":${pad.replace('{"a700":', `{"a700"${fault}:`)}}`,
        `{"pad":${pad.replace('"\\u00e9"]}]', `"\\u00e9"]}${fault}]`)}}`,
      ];
      for (const text of texts) {
        const thresholds = text.length < 100 ? [1, 2, 3, 5, 8] : [64, NATIVE_CHARS];
        for (const nativeChars of thresholds) await agrees(text, { nativeChars, charsPerTurn: 4096 });
        messages.push(parseJsonAgrees(text, {}));
      }
    }
    await Promise.all(messages);
  });
});
