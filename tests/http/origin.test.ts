/**
 * Request admission as pure decisions (lib/admission/front-door.ts), the JSON media type rule of
 * parseJsonBody, and the settings web.allowed_hosts and web.cors_origins as start-up reads them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as v from 'valibot';
import { isJsonMediaType, parseJsonBody } from '../../lib/http/body.ts';
import { errorResponse } from '../../lib/http/errors.ts';
import {
  type Admission,
  admissionPolicy,
  admit,
  type RequestFacts,
  sdkAllowLists,
} from '../../lib/admission/front-door.ts';
import { normalizeOrigin, parseHost } from '../../lib/net/address.ts';
import { loadConfig } from '../../lib/settings/load.ts';
import { type SettingsOverrides, writeSettings } from '../support/server.ts';

const POLICY = admissionPolicy({
  host: '127.0.0.1',
  allowedHosts: ['cell.example', 'pinned.example:9999'],
  corsOrigins: ['http://cell-ui.local:3000'],
});
const UI = 'http://cell-ui.local:3000';

const facts = (over: Partial<RequestFacts>): RequestFacts => ({
  method: 'GET',
  host: '127.0.0.1:8007',
  origin: null,
  secFetchSite: null,
  preflightMethod: null,
  ...over,
});
/** 'admit', 'admit+cors', 'preflight' or 'refuse' with the refusal's detail. */
function outcome(a: Admission): string {
  if (a.kind === 'refuse')
    return `refuse: ${a.kind === 'refuse' && a.error.kind === 'forbidden' ? a.error.detail : ''}`;
  if (a.kind === 'preflight') return `preflight ${a.origin}`;
  return a.corsOrigin ? `admit+cors ${a.corsOrigin}` : 'admit';
}

describe('admit: the Host header', () => {
  const cases: [host: string, expected: 'admit' | 'refuse'][] = [
    ['127.0.0.1:8007', 'admit'],
    ['127.0.0.1', 'admit'],
    ['localhost:8007', 'admit'],
    ['LOCALHOST:1234', 'admit'],
    ['localhost', 'admit'],
    ['[::1]:8007', 'admit'],
    ['[::1]', 'admit'],
    ['cell.example', 'admit'],
    ['cell.example:8443', 'admit'],
    ['pinned.example:9999', 'admit'],
    ['pinned.example:9998', 'refuse'],
    ['pinned.example', 'refuse'],
    ['evil.example:8007', 'refuse'],
    ['localhost.evil.example:8007', 'refuse'],
    ['127.0.0.1.evil.example', 'refuse'],
    ['localhost.:8007', 'refuse'],
    ['10.0.0.5:8007', 'refuse'],
    ['127.0.0.1:8007/x', 'refuse'],
    ['127.0.0.1:99999', 'refuse'],
    ['user@127.0.0.1', 'refuse'],
    ['', 'refuse'],
  ];
  for (const [host, expected] of cases) {
    it(`${expected}s Host '${host}' on GET and POST`, () => {
      for (const method of ['GET', 'POST']) {
        const got = outcome(admit(POLICY, facts({ method, host })));
        assert.ok(got.startsWith(expected), `${method} ${host}: ${got}`);
        if (expected === 'refuse') assert.match(got, /web\.allowed_hosts/);
      }
    });
  }

  it('names the host and the setting to change in the refusal', () => {
    const got = admit(POLICY, facts({ host: 'evil.example:8007' }));
    assert.equal(got.kind, 'refuse');
    if (got.kind !== 'refuse') return;
    assert.equal(errorResponse(got.error).status, 403);
    assert.match(
      got.kind === 'refuse' && got.error.kind === 'forbidden' ? got.error.detail : '',
      /Host 'evil\.example:8007' is not served here .*DNS rebinding.*add it to web\.allowed_hosts/,
    );
  });

  it('serves a concrete web.host on any port, and no name for 0.0.0.0 or ::', () => {
    const concrete = admissionPolicy({ host: '192.168.10.4', allowedHosts: [], corsOrigins: [] });
    assert.equal(admit(concrete, facts({ host: '192.168.10.4:8007' })).kind, 'admit');
    const v6 = admissionPolicy({ host: 'fd00::4', allowedHosts: [], corsOrigins: [] });
    assert.equal(admit(v6, facts({ host: '[fd00::4]:8007' })).kind, 'admit');
    for (const wildcard of ['0.0.0.0', '::', '[::]']) {
      const policy = admissionPolicy({ host: wildcard, allowedHosts: [], corsOrigins: [] });
      assert.deepEqual([...policy.names].sort(), ['127.0.0.1', '[::1]', 'localhost'], wildcard);
      assert.equal(
        admit(policy, facts({ host: `${wildcard.includes(':') ? '[::]' : wildcard}:8007` })).kind,
        'refuse',
        wildcard,
      );
    }
  });
});

describe('admit: Origin and Sec-Fetch-Site', () => {
  const cases: { name: string; f: Partial<RequestFacts>; expected: string }[] = [
    { name: 'a POST without Origin (curl, scripts)', f: { method: 'POST' }, expected: 'admit' },
    {
      name: 'a same-origin POST (the /docs page)',
      f: { method: 'POST', origin: 'http://127.0.0.1:8007' },
      expected: 'admit',
    },
    {
      name: 'a same-origin POST by another admitted name',
      f: { method: 'POST', host: 'cell.example:8007', origin: 'http://cell.example:8007' },
      expected: 'admit',
    },
    {
      name: 'a same-origin POST on the default port',
      f: { method: 'POST', host: 'cell.example', origin: 'http://cell.example' },
      expected: 'admit',
    },
    {
      name: 'a same-origin POST through an https proxy',
      f: { method: 'POST', host: 'cell.example', origin: 'https://cell.example' },
      expected: 'admit',
    },
    { name: 'a POST from a cors_origins front end', f: { method: 'POST', origin: UI }, expected: `admit+cors ${UI}` },
    { name: 'a GET from a cors_origins front end', f: { origin: UI }, expected: `admit+cors ${UI}` },
    {
      name: 'a GET from a foreign origin (a read; its answer is not readable cross-origin)',
      f: { origin: 'http://evil.example' },
      expected: 'admit',
    },
    { name: 'a POST from a foreign origin', f: { method: 'POST', origin: 'http://evil.example' }, expected: 'refuse' },
    {
      name: 'a DELETE from a foreign origin',
      f: { method: 'DELETE', origin: 'http://evil.example' },
      expected: 'refuse',
    },
    { name: 'a PUT from a foreign origin', f: { method: 'PUT', origin: 'http://evil.example' }, expected: 'refuse' },
    {
      name: 'a PATCH from a foreign origin',
      f: { method: 'PATCH', origin: 'http://evil.example' },
      expected: 'refuse',
    },
    { name: 'a POST with Origin null', f: { method: 'POST', origin: 'null' }, expected: 'refuse' },
    {
      name: 'a POST from the same host on another port',
      f: { method: 'POST', origin: 'http://127.0.0.1:3000' },
      expected: 'refuse',
    },
    {
      name: 'a POST from another loopback name',
      f: { method: 'POST', origin: 'http://localhost:8007' },
      expected: 'refuse',
    },
    {
      name: 'a POST from a cors origin on another port',
      f: { method: 'POST', origin: 'http://cell-ui.local:3001' },
      expected: 'refuse',
    },
    {
      name: 'a POST from the cors origin over https',
      f: { method: 'POST', origin: 'https://cell-ui.local:3000' },
      expected: 'refuse',
    },
    { name: 'a POST with a file:// origin', f: { method: 'POST', origin: 'file://' }, expected: 'refuse' },
    { name: 'a cross-site POST without Origin', f: { method: 'POST', secFetchSite: 'cross-site' }, expected: 'refuse' },
    { name: 'a same-site POST without Origin', f: { method: 'POST', secFetchSite: 'same-site' }, expected: 'admit' },
    { name: 'a cross-site GET without Origin', f: { secFetchSite: 'cross-site' }, expected: 'admit' },
    {
      name: 'a preflight from a cors_origins front end',
      f: { method: 'OPTIONS', origin: UI, preflightMethod: 'POST' },
      expected: `preflight ${UI}`,
    },
    {
      name: 'a preflight from a foreign origin',
      f: { method: 'OPTIONS', origin: 'http://evil.example', preflightMethod: 'POST' },
      expected: 'refuse',
    },
    {
      name: 'an OPTIONS without Origin (not a preflight)',
      f: { method: 'OPTIONS', preflightMethod: 'POST' },
      expected: 'admit',
    },
    {
      name: 'a preflight from a cors origin at a foreign Host',
      f: { method: 'OPTIONS', host: 'evil.example', origin: UI, preflightMethod: 'POST' },
      expected: 'refuse host',
    },
  ];
  for (const c of cases) {
    it(`${c.expected.split(' ')[0]}s ${c.name}`, () => {
      const got = outcome(admit(POLICY, facts(c.f)));
      if (c.expected === 'refuse') assert.match(got, /^refuse: .*web\.cors_origins/);
      else if (c.expected === 'refuse host') assert.match(got, /^refuse: Host .*web\.allowed_hosts/);
      else assert.equal(got, c.expected);
    });
  }
});

describe('sdkAllowLists: the MCP SDK compares whole header values', () => {
  it('lists every served name bare and with the session port, the pinned host:port, and their origins', () => {
    const { allowedHosts, allowedOrigins } = sdkAllowLists(POLICY, '127.0.0.1:8007');
    for (const host of [
      'localhost',
      'localhost:8007',
      '127.0.0.1:8007',
      '[::1]:8007',
      'cell.example',
      'cell.example:8007',
      'pinned.example:9999',
    ]) {
      assert.ok(allowedHosts.includes(host), host);
    }
    assert.ok(!allowedHosts.some((h) => h.startsWith('evil')));
    for (const origin of [UI, 'http://127.0.0.1:8007', 'https://cell.example', 'http://pinned.example:9999'])
      assert.ok(allowedOrigins.includes(origin), origin);
    assert.ok(!allowedOrigins.includes('null'));
  });
});

describe('host and origin syntax', () => {
  it('parses host values and refuses anything else', () => {
    assert.deepEqual(parseHost('Cell.Example:8007'), { name: 'cell.example', port: 8007 });
    assert.deepEqual(parseHost('[::1]'), { name: '[::1]', port: undefined });
    for (const bad of ['http://cell', 'cell/x', 'fe80::1', 'cell:0', 'cell:65536', 'a b', '*'])
      assert.equal(parseHost(bad), undefined, bad);
  });
  it('normalizes origins as browsers send them', () => {
    assert.equal(normalizeOrigin('HTTP://Cell-UI.local:3000'), 'http://cell-ui.local:3000');
    assert.equal(normalizeOrigin('https://ui.example:443'), 'https://ui.example');
    for (const bad of ['http://ui/', 'http://ui/app', 'ftp://ui', 'null', '*', 'ui.example:3000'])
      assert.equal(normalizeOrigin(bad), undefined, bad);
  });
});

describe('JSON bodies must be declared as JSON', () => {
  const cases: [type: string | null, json: boolean][] = [
    ['application/json', true],
    ['application/json; charset=utf-8', true],
    ['Application/JSON ;charset=UTF-8', true],
    ['application/merge-patch+json', true],
    ['application/vnd.api+json; charset=utf-8', true],
    [null, false],
    ['', false],
    ['text/plain', false],
    ['text/plain;charset=UTF-8', false],
    ['text/json', false],
    ['application/jsonx', false],
    ['application/x-www-form-urlencoded', false],
    ['multipart/form-data; boundary=x', false],
    ['application/+json', false],
  ];
  for (const [type, json] of cases) {
    it(`${json ? 'accepts' : 'refuses'} Content-Type ${type === null ? '(none)' : `'${type}'`}`, async () => {
      assert.equal(isJsonMediaType(type), json);
      const request = new Request('http://armgate.test/x', {
        method: 'POST',
        body: '{"x": 1}',
        headers: type === null ? {} : { 'content-type': type },
      });
      if (type === null) request.headers.delete('content-type');
      const parsed = await parseJsonBody(request, v.object({ x: v.number() }));
      if (json) assert.deepEqual(parsed, { ok: true, value: { x: 1 } });
      else {
        assert.equal(parsed.ok, false);
        if (parsed.ok) return;
        const res = errorResponse(parsed.error);
        assert.equal(res.status, 415);
        const body = (await res.json()) as { detail: string };
        assert.match(
          body.detail,
          /Content-Type: application\/json .*-H 'Content-Type: application\/json' or use --json/,
        );
      }
    });
  }
});

describe('settings web.allowed_hosts and web.cors_origins', () => {
  async function load(web: Record<string, unknown>) {
    const overrides: SettingsOverrides = { web };
    const s = await writeSettings(overrides);
    try {
      return await loadConfig(s.file, { env: {} });
    } finally {
      await s.cleanup();
    }
  }

  it('default to empty lists', async () => {
    const loaded = await load({});
    assert.ok(loaded.ok && loaded.value.kind === 'serve');
    if (!loaded.ok || loaded.value.kind !== 'serve') return;
    assert.deepEqual(loaded.value.config.web.allowedHosts, []);
    assert.deepEqual(loaded.value.config.web.corsOrigins, []);
  });

  it('load lowercase, origins without the default port', async () => {
    const loaded = await load({
      allowed_hosts: ['Cell.Local', 'cell.local:8007', '[fd00::4]', '10.0.0.5'],
      cors_origins: ['HTTP://Cell-UI.local:3000', 'https://ui.example:443'],
    });
    if (!loaded.ok) assert.fail(loaded.error);
    if (loaded.value.kind !== 'serve') return;
    assert.deepEqual(loaded.value.config.web.allowedHosts, ['cell.local', 'cell.local:8007', '[fd00::4]', '10.0.0.5']);
    assert.deepEqual(loaded.value.config.web.corsOrigins, ['http://cell-ui.local:3000', 'https://ui.example']);
  });

  const refusals: [name: string, web: Record<string, unknown>, message: RegExp][] = [
    [
      'a string for allowed_hosts',
      { allowed_hosts: 'cell.local' },
      /^web\.allowed_hosts: expected a list of host names$/,
    ],
    ['a number in allowed_hosts', { allowed_hosts: [42] }, /^web\.allowed_hosts\.0: expected a host name$/],
    [
      'a URL in allowed_hosts',
      { allowed_hosts: ['cell.local', 'http://cell.local'] },
      /^web\.allowed_hosts\.1: expected a host name or address, optionally host:port/,
    ],
    [
      'a port out of range in allowed_hosts',
      { allowed_hosts: ['cell.local:70000'] },
      /^web\.allowed_hosts\.0: expected a host name/,
    ],
    [
      'an IPv6 address without brackets in allowed_hosts',
      { allowed_hosts: ['fd00::4'] },
      /^web\.allowed_hosts\.0: .*IPv6 in brackets/,
    ],
    ['a wildcard in allowed_hosts', { allowed_hosts: ['*'] }, /^web\.allowed_hosts\.0: expected a host name/],
    [
      'a mapping for cors_origins',
      { cors_origins: { ui: 'http://ui' } },
      /^web\.cors_origins: expected a list of origins$/,
    ],
    ['a number in cors_origins', { cors_origins: [3000] }, /^web\.cors_origins\.0: expected an origin$/],
    [
      'a trailing slash in cors_origins',
      { cors_origins: ['http://cell-ui.local:3000/'] },
      /^web\.cors_origins\.0: expected an origin scheme:\/\/host\[:port\]/,
    ],
    [
      'a path in cors_origins',
      { cors_origins: ['http://cell-ui.local/app'] },
      /^web\.cors_origins\.0: expected an origin/,
    ],
    ['a wildcard in cors_origins', { cors_origins: ['*'] }, /^web\.cors_origins\.0: expected an origin/],
    ['null in cors_origins', { cors_origins: ['null'] }, /^web\.cors_origins\.0: expected an origin/],
    [
      'a host without scheme in cors_origins',
      { cors_origins: ['cell-ui.local:3000'] },
      /^web\.cors_origins\.0: expected an origin/,
    ],
  ];
  for (const [name, web, message] of refusals) {
    it(`refuses ${name}, naming the key`, async () => {
      const loaded = await load(web);
      if (loaded.ok) assert.fail(`expected a refusal, got ${loaded.value.kind}`);
      assert.match(loaded.error, message);
    });
  }
});
