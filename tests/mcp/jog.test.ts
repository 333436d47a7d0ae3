/**
 * The MCP tool `jog`: one bounded step, answered at rest, exact to 1e-3 (simulator at time_scale 1, on a clock the
 * test steps until each call answers: tests/support/stepped.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createFkWorkspace, forwardKinematics } from '../../lib/kinematics/fk.ts';
import { mcpTransport } from '../support/mcp.ts';
import type { SteppedClock } from '../../lib/clock.ts';
import type { TestApp } from '../support/server.ts';
import { createSteppedApp, steppedUntilSettled } from '../support/stepped.ts';

let app: TestApp;
let clock: SteppedClock;
let client: Client;

interface Stepped {
  success: boolean;
  reason: string;
  joints: number[];
}
const step = async (args: Record<string, unknown>) => {
  const result = await steppedUntilSettled(clock, client.callTool({ name: 'jog', arguments: args }), 'the jog tool');
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  return result.structuredContent as unknown as Stepped;
};
const state = async () =>
  (await (await app.request('/robot/joint_states')).json()) as { position: number[]; velocity: number[] };

/** The TCP pose (position, row-major rotation) at `q`. */
function pose(q: readonly number[]): { p: number[]; r: number[] } {
  const chain = app.services.safety?.chain;
  assert.ok(chain);
  const ws = createFkWorkspace(chain);
  forwardKinematics(chain, q, ws);
  return { p: Array.from(ws.tipPos), r: Array.from(ws.tipRot) };
}

describe('the MCP tool jog', () => {
  before(async () => {
    ({ app, clock } = await createSteppedApp({ sim: { time_scale: 1 } }));
    client = new Client({ name: 'jog-test', version: '1' });
    await client.connect(mcpTransport(app));
  });
  after(async () => {
    await client.close();
    await app.close();
  });

  it('says it moves the arm', async () => {
    const tool = (await client.listTools()).tools.find((t) => t.name === 'jog');
    assert.equal(tool?.annotations?.destructiveHint, true);
    assert.equal(tool?.annotations?.readOnlyHint, false);
  });

  it('steps a joint exactly and answers at rest', async () => {
    const before = (await state()).position;
    const done = await step({ joint: 3, delta: -0.12 });
    assert.equal(done.success, true);
    assert.equal(done.reason, 'released');
    const now = await state();
    assert.ok(
      now.velocity.every((v) => v === 0),
      'at rest when it answers',
    );
    for (const [j, q] of now.position.entries())
      assert.ok(Math.abs(q - (before[j] ?? 0) - (j === 2 ? -0.12 : 0)) < 1e-3, `joint${j + 1} at ${q}`);
  });

  it('steps the TCP along an axis of the tool frame and about one of the base frame, exactly', async () => {
    const before = pose((await state()).position);
    const along = await step({ axis: 'x', delta: 0.03, frame: 'tool' });
    assert.equal(along.success, true);
    const moved = pose(along.joints);
    // The tool's x axis is the rotation's first column.
    for (const a of [0, 1, 2])
      assert.ok(
        Math.abs((moved.p[a] ?? 0) - (before.p[a] ?? 0) - 0.03 * (before.r[3 * a] ?? 0)) < 1e-3,
        `axis ${a}: ${moved.p[a]}`,
      );
    const turned = await step({ axis: 'c', delta: 0.15 });
    const after = pose(turned.joints);
    for (const a of [0, 1, 2]) assert.ok(Math.abs((after.p[a] ?? 0) - (moved.p[a] ?? 0)) < 1e-3, 'the TCP point kept');
    // About base z by 0.15 rad: the tool's x axis turned by 0.15 in the xy plane.
    const raw = Math.atan2(after.r[3] ?? 0, after.r[0] ?? 0) - Math.atan2(moved.r[3] ?? 0, moved.r[0] ?? 0);
    const angle = Math.atan2(Math.sin(raw), Math.cos(raw));
    assert.ok(Math.abs(angle - 0.15) < 1e-3, `turned ${angle} rad`);
  });

  it('refuses a step beyond its bound as a tool error naming the argument, and nothing moves', async () => {
    const before = (await state()).position;
    const result = await steppedUntilSettled(
      clock,
      client.callTool({ name: 'jog', arguments: { axis: 'z', delta: 0.06 } }),
      'the jog tool',
    );
    assert.equal(result.isError, true);
    assert.match(JSON.stringify(result.content), /delta/);
    assert.deepEqual((await state()).position, before);
  });
});
