/**
 * A raise of the speed override by a token whose role cannot raise it is refused for its role (403) whether or not a
 * stop arrived after it: the role is the first reason, the stop the second (it was 409 "a stop arrived" when a stop
 * came between the request's arrival and its run, telling the viewer to send it again).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../support/server.ts';

const ADMIN = 'override-roles-admin-token-0123456789';
const VIEWER = 'override-roles-viewer-token-0123456789';

describe('a raise of the override by a read token', () => {
  let app: TestApp;
  before(async () => {
    app = await createTestApp({ web: { token: ADMIN, tokens: [{ name: 'viewer', token: VIEWER, role: 'read' }] } });
  });
  after(async () => {
    await app.close();
  });

  /** PUT /robot/override as `token`, stamped as having arrived before the stops counted so far when `early`. */
  const put = async (token: string, percent: number, early = false) => {
    const request = new Request('http://127.0.0.1:8007/robot/override', {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', host: '127.0.0.1:8007' },
      body: JSON.stringify({ percent }),
    });
    const stamp = app.services.arbiter.stopCount - (early ? 1 : 0);
    const res = await app.fetch(request, '', stamp);
    return { status: res.status, body: (await res.json()) as { detail?: string; percent?: number } };
  };

  it('is 403 naming the role, with or without a stop since it arrived; a lowering is made either way', async () => {
    assert.equal((await put(ADMIN, 40)).status, 200);
    const stop = await app.request('/stop', { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` } });
    assert.equal(stop.status, 200);
    for (const early of [false, true]) {
      const raised = await put(VIEWER, 90, early);
      assert.equal(raised.status, 403, JSON.stringify(raised.body));
      assert.match(raised.body.detail ?? '', /needs the role 'operate'; the token 'viewer' has the role 'read'/);
    }
    // An operate token's raise that arrived before the stop is still refused for the stop.
    const admin = await put(ADMIN, 90, true);
    assert.equal(admin.status, 409, JSON.stringify(admin.body));
    const lowered = await put(VIEWER, 20, true);
    assert.equal(lowered.status, 200, JSON.stringify(lowered.body));
    assert.equal(lowered.body.percent, 20);
  });
});
