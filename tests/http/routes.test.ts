import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { catalog } from '../../handlers/index.ts';
import { kindOf, routeTable } from '../../lib/http/routes.ts';

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
    assert.ok(table.isStop('POST', '/stop'));
    assert.ok(table.isStop('POST', '/robot/stop'));
    assert.ok(!table.isStop('GET', '/stop'), 'by method and path');
    assert.equal(
      kindOf(catalog.operations.find((op) => op.rest.path === '/trajectory/send_csv') ?? assert.fail()),
      'upload',
    );
    assert.equal(
      kindOf(catalog.operations.find((op) => op.rest.path === '/robot/move/joints') ?? assert.fail()),
      'motion',
    );
    assert.ok(table.isRestRead('GET', '/robot/joint_states'));
    assert.ok(!table.isRestRead('POST', '/robot/move/joints'));
    assert.ok(!table.isRestRead('GET', '/robot/joint_states/'), 'only the exact path');
  });

  it('gives the listener and the turn queue their rules: streams, what runs at once', () => {
    assert.ok(table.isStream('GET', '/events'));
    assert.ok(!table.isStream('POST', '/events'));
    assert.ok(table.runsAtOnce('POST', '/stop'), 'a stop is not queued');
    assert.ok(table.runsAtOnce('POST', '/mcp/mcp'), 'the MCP POST schedules its own work');
    assert.ok(!table.runsAtOnce('GET', '/mcp/mcp'), 'other MCP methods are queued');
    assert.ok(!table.runsAtOnce('GET', '/robot/joint_states'));
    assert.equal(table.find('DELETE', '/mcp/mcp')?.kind, 'mount', 'a mount takes every method');
  });

  it("holds the catalog's WebSocket routes for the upgrade dispatcher, beside the operation on the same path", () => {
    assert.equal(table.upgradeAt('/robot/jog')?.upgrade, upgrade, 'GET /robot/jog is the jog WebSocket');
    assert.equal(table.upgradeAt('/robot/joint_states'), undefined, 'a read is no WebSocket');
    assert.ok(!table.isRestRead('GET', '/robot/jog'));
    assert.equal(table.operationAt('POST', '/robot/jog')?.operation.name, 'jog_command');
    assert.deepEqual(table.methodsAt('/robot/jog'), ['POST'], "a GET there without an upgrade is POST's 405");
  });

  it("answers a 405's Allow from the operations on a path", () => {
    assert.deepEqual(table.methodsAt('/robot/override'), ['GET', 'PUT']);
    assert.equal(table.methodsAt('/nowhere'), undefined);
  });
});
