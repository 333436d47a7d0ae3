/**
 * lib/body/sliced-json.ts: JSON.parse in slices of the event loop's time gives JSON.parse's values and refusals, with
 * pieces as small as one character handed to JSON.parse (every path of the pass), and waits for the next turn between
 * slices of its work counted in characters (the waits counted with an injected wait; nothing timed).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_DEPTH, parseJsonSliced } from '../../lib/body/sliced-json.ts';

const TEXTS = [
  '0',
  ' -12.5e-3 ',
  '"a \\" \\\\ \\u00e9 \\ud83d\\ude00 ]}"',
  'true',
  'null',
  '[]',
  '{}',
  ' [ 1 , 2 ,[ ], { } , "x" ] ',
  '{"a":1,"b":[true,false,null],"c":{"d":"e"}}',
  '{"b":1,"a":2,"b":3}',
  '{"__proto__":{"polluted":true},"x":1}',
  '{"2":"two","1":"one","z":0}',
  '[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"stop","arguments":{}}},{"jsonrpc":"2.0","method":"x"}]',
  `{"points":[${Array.from({ length: 50 }, (_, i) => `{"positions":[${i},0,0,-1.57,0,1.57,0],"time_from_start":${i / 10}}`).join(',')}]}`,
  `[${Array.from({ length: 40 }, (_, i) => `{"k${i}":${i}}`).join(' , ')}]`,
  '\n\t[\r\n1\t]\n',
];

const BAD = [
  '',
  ' ',
  '[1,]',
  '[,1]',
  '[1 2]',
  '{"a" 1}',
  '{"a":}',
  '{"a":1,}',
  '{a:1}',
  '{"a":1',
  '[1',
  '"abc',
  '[1]]',
  '[1] x',
  '[tru]',
  '[01]',
  '["\u0001"]',
  '{"a":1}{"b":2}',
  '[1:2]',
  '{"a":1:2}',
  ']',
  '}',
  '[}',
  '{]',
  '["a\\x"]',
];

describe('parseJsonSliced', () => {
  for (const nativeChars of [1, 2, 5, 17, 1_000_000]) {
    it(`gives JSON.parse's values with pieces under ${nativeChars} characters parsed natively`, async () => {
      for (const text of TEXTS) {
        const sliced = await parseJsonSliced(text, { nativeChars });
        assert.deepStrictEqual(sliced, JSON.parse(text), text.slice(0, 80));
        assert.equal(JSON.stringify(sliced), JSON.stringify(JSON.parse(text)), `key order: ${text.slice(0, 80)}`);
      }
      const proto = (await parseJsonSliced('{"__proto__":{"polluted":true},"x":1}', { nativeChars })) as object;
      assert.ok(Object.hasOwn(proto, '__proto__'), '__proto__ is an own property, as JSON.parse makes it');
      assert.equal(({} as { polluted?: boolean }).polluted, undefined, 'no prototype polluted');
    });

    it(`refuses what JSON.parse refuses (a SyntaxError), pieces under ${nativeChars} characters`, async () => {
      for (const text of BAD) {
        assert.throws(() => JSON.parse(text), SyntaxError, `JSON.parse refuses ${text}`);
        await assert.rejects(parseJsonSliced(text, { nativeChars }), SyntaxError, text);
      }
    });
  }

  it(`refuses a text nested deeper than ${MAX_DEPTH} containers in its large part`, async () => {
    const deep = `${'['.repeat(MAX_DEPTH + 1)}${']'.repeat(MAX_DEPTH + 1)}`;
    await assert.rejects(parseJsonSliced(deep, { nativeChars: 1 }), /Nested too deep/);
    const fine = `${'['.repeat(MAX_DEPTH)}${']'.repeat(MAX_DEPTH)}`;
    assert.deepStrictEqual(await parseJsonSliced(fine, { nativeChars: 1 }), JSON.parse(fine));
  });

  it('waits for the next turn between slices of a large text, and not for a small one', async () => {
    let waits = 0;
    const pause = async () => {
      waits++;
    };
    const large = `[${Array.from({ length: 20_000 }, (_, i) => `{"a${i}":${i}}`).join(',')}]`;
    const value = await parseJsonSliced(large, { charsPerTurn: 1024, pause });
    assert.deepStrictEqual(value, JSON.parse(large));
    // About 250 KiB scanned and as much parsed, 1 KiB a turn, and 64 characters more for each of 20,000 pieces.
    assert.ok(waits > 400 && waits < 2000, `waited ${waits} times`);
    waits = 0;
    await parseJsonSliced('[1,2,3]', { charsPerTurn: 1, pause });
    assert.equal(waits, 0, 'a text under NATIVE_CHARS is parsed at once');
  });
});
