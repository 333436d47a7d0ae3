/**
 * A REST move whose body is 16 KiB or more (parsed a slice per turn, lib/body/parse-json.ts) reaches the same validated
 * input as the same body parsed whole: each body below, padded with whitespace of the four kinds around its tokens,
 * gets the answer (status and body: the dry run's plan, or the 422's field paths and messages) that it gets unpadded
 * (under 16 KiB: JSON.parse at once). Duplicate keys, escaped key names, `__proto__`,
 * number spellings and long strings are what a parser could read differently.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { NATIVE_CHARS } from '../../lib/body/sliced-json.ts';
import { seeded } from '../support/json-texts.ts';
import { createTestApp, type TestApp } from '../support/server.ts';

const JSON_HEADERS = { 'content-type': 'application/json' };

const BODIES = [
  '{"joints":[9,9,9,9,9,9,9],"j\\u006fints":[0.0,-0,0e0,-1.57,0.1e-0,1.57E0,0],"speed":0.2,"dry_run":true}',
  '{"joints":[0,0,0,-157e-2,0,1.57,0],"speed":2E-1,"dry_run":false,"dry_run":true}',
  '{"joints":[0,0,0,-1.57,0,1.57,0],"speed":0.2,"dry_run":true,"\\u0064ry_run":true}',
  '{"__proto__":{"dry_run":false},"joints":[0,0,0,-1.57,0,1.57,0],"speed":0.2,"dry_run":true}',
  '{"joints":[0,0,0,-1.57,0,1.57,1e400],"speed":0.2,"dry_run":true}',
  '{"joints":[0,0,0,-1.57,0,1.57,5e-324,0],"speed":-0,"dry_run":true}',
  '{"joints":[0,0,0,-1.57,0,1.57,0],"speed":1.7976931348623157e308,"dry_run":"true"}',
  `{"joints":[0,0,0,-1.57,0,1.57,0],"speed":0.2,"dry_run":true,"pad":"${'\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\\ud800'.repeat(300)}"}`,
  '{"joints":[0,0,0,-1.57,0,1.57,0],"speed":0.2,"dry_run":true,"speed":12345678901234567890123}',
];

/** `text` with whitespace of the four kinds put between its tokens until it is `size` characters or more. */
function padded(text: string, size: number, random: () => number): string {
  const ws = [' ', '\t', '\n', '\r'];
  const gaps: number[] = [];
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '"') inString = !inString;
    else if (text[i] === '\\') i++;
    else if (!inString && ',:[]{}'.includes(text[i] as string)) gaps.push(i, i + 1);
  }
  const each = Math.ceil((size - text.length) / gaps.length) + 1;
  let out = '';
  let from = 0;
  for (const gap of gaps) {
    out += text.slice(from, gap);
    for (let n = Math.floor(random() * 2 * each); n > 0; n--) out += ws[Math.floor(random() * 4)];
    from = gap;
  }
  out += text.slice(from);
  return out.length >= size ? out : padded(out, size, random);
}

describe('a REST move of 16 KiB or more, parsed in slices', () => {
  let app: TestApp;
  before(async () => {
    app = await createTestApp();
  });
  after(() => app.close());

  it('reaches the same validated input as the same body parsed whole (the same answer)', async () => {
    const random = seeded(0x4e57);
    const answer = async (body: string) => {
      const res = await app.request('/robot/move/joints', { method: 'POST', headers: JSON_HEADERS, body });
      const json = (await res.json()) as { plan?: { id: string; expires_at?: string } };
      // A plan's id and the instant it expires are its own: the rest of the answer is the input's.
      const id = json.plan?.id ?? 'no plan';
      if (json.plan) json.plan = { ...json.plan, id: 'the plan', expires_at: 'later' };
      return { status: res.status, body: JSON.parse(JSON.stringify(json).replaceAll(id, 'the plan')) as unknown };
    };
    const statuses = new Set<number>();
    for (const text of BODIES) {
      assert.ok(text.length < NATIVE_CHARS, text.slice(0, 60));
      const large = padded(text, NATIVE_CHARS + 1000, random);
      assert.ok(large.length >= NATIVE_CHARS);
      const whole = await answer(text);
      statuses.add(whole.status);
      const sliced = await answer(large);
      assert.deepEqual(sliced, whole, `${JSON.stringify(sliced)}\n${JSON.stringify(whole)}`);
    }
    assert.deepEqual([...statuses].sort(), [200, 422], 'plans and refusals both compared');
  });
});
