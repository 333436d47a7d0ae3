/**
 * REST JSON bodies of 16 KiB or more parsed a slice per turn of the event loop (lib/body/parse-json.ts), through the
 * app in memory: a POST /stop sent while a 1 MiB body of distinct-keyed objects is parsed is answered before that
 * body's request (order, not time: parsed at once, the body's request was answered before the stop was even sent);
 * a large body, or a large JSON file of a form, that is not JSON is refused with JSON.parse's own message, as before.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { NATIVE_CHARS } from '../../lib/body/sliced-json.ts';
import { parseJson } from '../../lib/body/parse-json.ts';
import { MAX_JSON_BODY_BYTES } from '../../lib/body/limits.ts';
import { createTestApp, type TestApp } from '../support/server.ts';
import { distinctObjects, nativeMessage } from '../support/json-texts.ts';

const WORK = [0, 0, 0, -1.57, 0, 1.57, 0];
const JSON_HEADERS = { 'content-type': 'application/json' };

/** Texts JSON.parse refuses, each over NATIVE_CHARS, their fault at the start, in the middle and at the end. */
function largeBadTexts(): string[] {
  const pad = distinctObjects(2 * NATIVE_CHARS);
  return [
    `{"joints":[0,0,0,0,0,0,0],"pad":${pad},}`,
    `{"joints":[0,0,0,0,0,0,0],"pad":${pad}`,
    `{"joints":[0,0,0,0,0,0,0],"pad":${pad.slice(0, -1)},]}`,
    `{"joints":[0,0,0,0,0,0,0],"pad":${pad.replace('{"a7":7}', '{"a7":07}')}}`,
    `{"joints":[0,0,0,0,0,0,0],"pad":${pad.replace('{"a9":9}', '{"a9":"\u0001"}')}}`,
    `{"joints":[0,0,0,0,0,0,0],"pad":${pad}} x`,
    `{joints:[0,0,0,0,0,0,0],"pad":${pad}}`,
    `{"joints":[0,0,0,0,0,0,0] "pad":${pad}}`,
    `{"pad":${pad.replace('{"a300":300}', '{"a300":tru}')},"joints":[0,0,0,0,0,0,0]}`,
  ];
}

describe('REST JSON bodies parsed in slices', () => {
  let app: TestApp;
  before(async () => {
    app = await createTestApp();
  });
  after(() => app.close());

  it('answers a POST /stop sent while a 1 MiB body of distinct-keyed objects is parsed before that body', async () => {
    const body = `{"joints":${JSON.stringify(WORK)},"pad":${distinctObjects(MAX_JSON_BODY_BYTES - 100)}}`;
    assert.ok(body.length <= MAX_JSON_BODY_BYTES && body.length > MAX_JSON_BODY_BYTES - 200);
    const order: string[] = [];
    const large = app
      .request('/robot/move/joints', { method: 'POST', headers: JSON_HEADERS, body })
      .then(async (res) => {
        order.push('body');
        return { status: res.status, json: (await res.json()) as { detail: { loc: unknown[]; type: string }[] } };
      });
    // The stop is sent on the next turn of the event loop, once the body's request has begun.
    await new Promise((resolve) => setImmediate(resolve));
    const stop = app.request('/stop', { method: 'POST' }).then((res) => {
      order.push('stop');
      return res.status;
    });
    assert.equal(await stop, 200);
    const answer = await large;
    assert.deepEqual(order, ['stop', 'body'], 'the stop is answered first');
    // The body was read whole and refused as before: the unknown field, after JSON.parse's values.
    assert.equal(answer.status, 422);
    assert.deepEqual(answer.json.detail[0]?.loc, ['body', 'pad']);
    assert.equal(answer.json.detail[0]?.type, 'unknown_key');
  });

  it("refuses a large body that is not JSON with JSON.parse's own message (422 at body)", async () => {
    for (const text of largeBadTexts()) {
      assert.ok(text.length >= NATIVE_CHARS);
      const res = await app.request('/robot/move/joints', { method: 'POST', headers: JSON_HEADERS, body: text });
      assert.equal(res.status, 422, text.slice(-40));
      const detail = ((await res.json()) as { detail: { loc: unknown[]; msg: string; type: string }[] }).detail;
      assert.deepEqual(detail, [
        { loc: ['body'], msg: `JSON decode error: ${nativeMessage(text)}`, type: 'json_invalid' },
      ]);
    }
  });

  it("refuses a large JSON file of a form that is not JSON with JSON.parse's own message (422 at the part)", async () => {
    const text = `{"home":{"joints":${JSON.stringify(WORK)},"speed":0.2},"pad":${distinctObjects(2 * NATIVE_CHARS)},}`;
    const form = new FormData();
    form.append('config', new Blob([text], { type: 'application/json' }), 'config.json');
    const res = await app.request('/sequences/start', { method: 'POST', body: form });
    assert.equal(res.status, 422);
    const detail = ((await res.json()) as { detail: { loc: unknown[]; msg: string; type: string }[] }).detail;
    assert.deepEqual(detail, [
      {
        loc: ['body', 'config'],
        msg: `the config file is not valid JSON: ${nativeMessage(text)}`,
        type: 'json_invalid',
      },
    ]);
  });
});

describe('parseJson', () => {
  it("gives JSON.parse's values for large texts, and takes what JSON.parse takes nested deeper than the slices", async () => {
    const large = `{"b":1,"pad":${distinctObjects(3 * NATIVE_CHARS)},"a":[true,null,"x"],"b":2}`;
    assert.deepStrictEqual(await parseJson(large), JSON.parse(large));
    // 300 containers deep, each larger than NATIVE_CHARS: the slices refuse it, JSON.parse takes it, and so does parseJson.
    const deep = `${'{"a":'.repeat(300)}${distinctObjects(NATIVE_CHARS + 100)}${'}'.repeat(300)}`;
    assert.deepStrictEqual(await parseJson(deep), JSON.parse(deep));
  });

  it('counts the waits of a large text, and none for a small one', async () => {
    let waits = 0;
    const pause = async () => {
      waits++;
    };
    const large = distinctObjects(4 * NATIVE_CHARS);
    assert.deepStrictEqual(await parseJson(large, { pause }), JSON.parse(large));
    assert.ok(waits >= 4, `waited ${waits} times`);
    waits = 0;
    await parseJson(distinctObjects(NATIVE_CHARS - 100), { pause });
    assert.equal(waits, 0);
  });
});
