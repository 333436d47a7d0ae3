/**
 * Progress of the motion tools over MCP carries a `total` (issue 25), so a client can draw a bar:
 * a move reports seconds since the call began of the seconds it is expected to take, from the start
 * of its execution on (while it plans, the duration is not known yet). Progress never passes its
 * total, and the total is about the motion's duration. The server runs on a clock the test steps (lib/clock.ts):
 * the simulator and a motion's progress ticks, so the notifications come every 500 ms of that clock whatever the load.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { SteppedClock } from '../../lib/clock.ts';
import { WORK } from '../support/live.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

describe('MCP progress of motions carries a total', () => {
  let server: TestServer;
  let client: Client;
  const clock = new SteppedClock(0, Date.now());

  before(async () => {
    server = await startTestServer({ sim: { time_scale: 2 } }, { clock });
    client = new Client({ name: 'progress-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp/mcp`)));
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  /** Calls `name` with a progress token; returns the result and every progress notification. */
  const withProgress = async (name: string, args: Record<string, unknown>) => {
    const seen: Progress[] = [];
    let done = false;
    const call = client
      .callTool({ name, arguments: args }, undefined, { onprogress: (p) => seen.push(p), timeout: 60_000 })
      .finally(() => (done = true));
    assert.ok(await clock.until(() => done, 10, 60_000), `${name} answered within 60 s of the clock`);
    const result = (await call) as CallToolResult;
    assert.equal(result.isError, undefined, JSON.stringify(result.content));
    return { result, seen };
  };

  /** The notifications from the first with a total on: each has one, at least its progress; the last near its end. */
  const assertBar = (seen: readonly Progress[], what: string, expectS: number) => {
    const first = seen.findIndex((p) => p.total !== undefined);
    assert.ok(first >= 0, `${what}: a total arrived (${JSON.stringify(seen)})`);
    const bar = seen.slice(first);
    assert.ok(bar.length >= 2, `${what}: ${bar.length} notifications with a total`);
    for (const p of bar) {
      assert.equal(typeof p.total, 'number', `${what}: every later notification has a total: ${JSON.stringify(p)}`);
      assert.ok(p.progress <= (p.total ?? 0), `${what}: progress ${p.progress} within its total ${p.total}`);
    }
    const total = bar.at(-1)?.total ?? 0;
    assert.ok(
      Math.abs(total - expectS) < 0.5 + expectS * 0.5,
      `${what}: total ${total} s, expected about ${expectS} s`,
    );
    // Planning notifications may come first; once executing, every one says how far the motion is.
    for (const p of seen.slice(0, first))
      assert.match(p.message ?? '', /planning/, `${what}: only planning lacks a total`);
  };

  it('move_to_joints, move_to_named_position and move_to_pose report a total while they execute', async () => {
    const joints = WORK.map((q, j) => (j === 0 ? q + 1.2 : q));
    // joint1 1.2 rad at 0.3 of 1.71 rad/s: about 2.4 s of motion, 1.2 s at time_scale 2.
    const moved = await withProgress('move_to_joints', { joints, speed: 0.3 });
    assert.equal(moved.result.structuredContent?.success, true);
    assertBar(moved.seen, 'move_to_joints', 1.3);
    const named = await withProgress('move_to_named_position', { name: 'work', speed: 0.3 });
    assert.equal(named.result.structuredContent?.success, true);
    assertBar(named.seen, 'move_to_named_position', 1.3);
    const pose = await withProgress('move_to_pose', { x: 0.45, y: 0.2, z: 0.5, a: 0, b: Math.PI, c: 0, speed: 0.1 });
    assert.equal(pose.result.structuredContent?.success, true, JSON.stringify(pose.result.structuredContent));
    assert.ok(
      pose.seen.some((p) => p.total !== undefined),
      `move_to_pose: a total arrived (${JSON.stringify(pose.seen)})`,
    );
    for (const p of pose.seen.filter((s) => s.total !== undefined)) assert.ok(p.progress <= (p.total ?? 0));
    await withProgress('move_to_named_position', { name: 'work', speed: 1 });
  });
});
