import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { catalog } from '../../handlers/index.ts';
import { isRestRead, isStop, isStream, kindOf, mayHoldStops, routeTable, runsAtOnce } from '../../lib/http/routes.ts';

describe('the route table, built from the catalog', () => {
  const mount = async () => new Response('mounted');
  const events = async () => new Response('events');
  const upgrade = () => {};
  const table = routeTable(
    catalog.files,
    [
      { path: '/mcp/mcp', handler: mount, ownTurns: ['POST'] },
      { path: '/events', handler: events, kind: 'stream' },
      { path: '/ui/package/*', handler: mount },
    ],
    (catalog.websockets ?? []).map((file) => ({ path: file.path, upgrade })),
  );

  it("serves each handler file's own exported handler", () => {
    for (const file of catalog.files) {
      const { method, path } = file.operation.rest;
      const route = table.routes.find((r) => 'operation' in r && r.method === method && r.path === path);
      assert.ok(route && 'operation' in route, `${method} ${path} is in the table`);
      assert.equal(route.handler, file.handler, `${method} ${path} is answered by its file's handler`);
      if (!path.includes('{')) assert.equal(table.operationAt(method, path), route, `${method} ${path} found exactly`);
    }
  });

  it('says the kind of each route from its operation: stops, uploads, motions, reads', () => {
    assert.ok(isStop(table.match('POST', '/stop')));
    assert.ok(isStop(table.match('POST', '/robot/stop')));
    assert.ok(!isStop(table.match('GET', '/stop')), 'by method and path');
    assert.equal(
      kindOf(catalog.operations.find((op) => op.rest.path === '/trajectory/send_csv') ?? assert.fail()),
      'upload',
    );
    assert.equal(
      kindOf(catalog.operations.find((op) => op.rest.path === '/robot/move/joints') ?? assert.fail()),
      'motion',
    );
    assert.ok(isRestRead(table.match('GET', '/robot/joint_states')));
    assert.ok(!isRestRead(table.match('POST', '/robot/move/joints')));
    assert.ok(isRestRead(table.match('GET', '/robot/joint_states/')), 'the same read, as the router serves it');
    assert.ok(!isRestRead(table.match('GET', '/robot/joint_states/x')), "only the route's path");
    assert.ok(!isRestRead(table.match('GET', '/robot/joint_states//')), 'one trailing slash');
  });

  it('gives the listener and the turn queue their rules: streams, what runs at once', () => {
    assert.ok(isStream(table.match('GET', '/events')));
    assert.ok(!isStream(table.match('POST', '/events')));
    assert.ok(runsAtOnce(table.match('POST', '/stop')), 'a stop is not queued');
    assert.ok(runsAtOnce(table.match('POST', '/mcp/mcp')), 'the MCP POST schedules its own work');
    assert.ok(!runsAtOnce(table.match('GET', '/mcp/mcp')), 'other MCP methods are queued');
    assert.ok(!runsAtOnce(table.match('GET', '/robot/joint_states')));
    assert.equal(table.find('DELETE', '/mcp/mcp')?.kind, 'mount', 'a mount takes every method');
  });

  it("finds a request's route once from its target, origin-form or an absolute URL: the path as sent, no query", () => {
    for (const target of ['/stop', '/stop?reason=x', '/stop#f', 'http://127.0.0.1:8007/stop?x=1', 'HTTP://h/stop']) {
      const match = table.match('POST', target);
      assert.equal(match.path, '/stop', target);
      assert.equal(match.route?.kind, 'stop', target);
      assert.ok(isStop(match) && runsAtOnce(match), `${target} is a stop`);
    }
    // A spelling the router serves as the stop (a trailing slash, a dot segment) is the stop, at the path it reads.
    for (const [target, path] of [
      ['/stop/', '/stop'],
      ['/x/../stop', '/stop'],
      ['/robot/./stop/?x=1', '/robot/stop'],
    ] as const) {
      const match = table.match('POST', target);
      assert.equal(match.path, path, target);
      assert.ok(isStop(match) && runsAtOnce(match), `${target} is a stop`);
    }
    // What the table does not hold is no stop of its rules (the router answers it as it always did).
    for (const [method, target, path] of [
      ['POST', '/%73top', '/%73top'],
      ['POST', 'http://h//stop', '//stop'],
      ['POST', '//stop/', '//stop/'],
      ['POST', '/nowhere/', '/nowhere/'],
      ['HEAD', '/stop', '/stop'],
      ['post', '/stop', '/stop'],
    ] as const) {
      const match = table.match(method, target);
      assert.equal(match.path, path, `${method} ${target}`);
      assert.ok(!isStop(match) && !runsAtOnce(match), `${method} ${target} is no stop`);
    }
    assert.equal(table.match('GET', 'http://127.0.0.1:8007').path, '/', 'an absolute URL without a path is at /');
    assert.equal(table.match('POST', '/robot/plans/p1/execute').route, undefined, "a path parameter is the router's");
  });

  it('says which requests may hold a stop in their body: a POST to a mount that reads its stops', () => {
    const stopsPastGuesses = async () => undefined;
    const withStops = routeTable(catalog.files, [{ path: '/mcp/mcp', handler: mount, stopsPastGuesses }]);
    assert.ok(mayHoldStops(withStops.match('POST', '/mcp/mcp')));
    assert.ok(mayHoldStops(withStops.match('POST', '/mcp/mcp?x=1')));
    assert.ok(!mayHoldStops(withStops.match('GET', '/mcp/mcp')), 'a POST only');
    assert.ok(!mayHoldStops(withStops.match('POST', '/stop')), 'a REST stop is never refused: it needs no body read');
    assert.ok(!mayHoldStops(table.match('POST', '/mcp/mcp')), 'a mount that reads no stops');
  });

  it("holds the catalog's WebSocket routes for the upgrade dispatcher, beside the operation on the same path", () => {
    assert.equal(table.upgradeAt('/robot/jog')?.upgrade, upgrade, 'GET /robot/jog is the jog WebSocket');
    assert.equal(table.upgradeAt('/robot/joint_states'), undefined, 'a read is no WebSocket');
    assert.ok(!isRestRead(table.match('GET', '/robot/jog')));
    assert.equal(table.operationAt('POST', '/robot/jog')?.operation.name, 'jog_command');
    assert.deepEqual(table.methodsAt('/robot/jog'), ['POST', 'GET'], "a 405's Allow there names the upgrade's GET");
  });

  it("answers a 405's Allow from the operations on a path", () => {
    assert.deepEqual(table.methodsAt('/robot/override'), ['GET', 'PUT']);
    assert.equal(table.methodsAt('/nowhere'), undefined);
  });
});
