import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { lazySchemaValidator } from '../../lib/mcp/lazy-validator.ts';
import { initializeRequest, mcpClient, mcpTransport } from '../support/mcp.ts';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { atRest, maxDiff, positions, WORK, type Target } from '../support/live.ts';
import { createTestApp, type TestApp } from '../support/server.ts';

interface ToolResult {
  isError?: boolean;
  content: { type: string; text?: string }[];
  structuredContent?: { success?: boolean; plan?: unknown };
}

const TARGET = [0.3, 0.3, 0, -1.3, 0, 1.3, 0];

/** A client that answers every elicitation with `answer` (or declares no elicitation when undefined), counting the questions. */
async function connect(url: Target, answer?: { action: 'accept' | 'decline'; confirm?: boolean }) {
  const asked: string[] = [];
  const client = mcpClient('confirm-test', answer ? { capabilities: { elicitation: {} } } : {});
  if (answer)
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(String((request.params as { message?: string }).message));
      return answer.action === 'accept'
        ? { action: 'accept', content: { confirm: answer.confirm ?? true } }
        : { action: 'decline' };
    });
  await client.connect(mcpTransport(url));
  return { client, asked };
}

/** A client whose person is asked and answers only when the test says: `question` resolves when asked. */
async function connectAsking(url: Target) {
  const client = mcpClient('confirm-test', { capabilities: { elicitation: {} } });
  let asked: () => void = () => {};
  const question = new Promise<void>((resolve) => {
    asked = resolve;
  });
  let answer: (yes: boolean) => void = () => {};
  const answered = new Promise<boolean>((resolve) => {
    answer = resolve;
  });
  client.setRequestHandler(ElicitRequestSchema, async () => {
    asked();
    return { action: 'accept', content: { confirm: await answered } };
  });
  await client.connect(mcpTransport(url));
  return { client, question, answer };
}

describe('mcp.confirm_motion asks the person through MCP elicitation before a motion tool runs', () => {
  let server: TestApp;
  before(async () => {
    server = await createTestApp({ sim: { time_scale: 20 }, mcp: { confirm_motion: true } });
  });
  after(async () => {
    await server.close();
  });

  it('runs the motion when the person confirms, after asking once with the tool and its input', async () => {
    const { client, asked } = await connect(server, { action: 'accept', confirm: true });
    try {
      const result = (await client.callTool({
        name: 'move_to_joints',
        arguments: { joints: TARGET, speed: 1 },
      })) as ToolResult;
      assert.ok(!result.isError, `moved: ${JSON.stringify(result.content)}`);
      assert.equal(asked.length, 1, 'asked once');
      assert.match(asked[0] ?? '', /move_to_joints .*0\.3/, 'the question names the tool and its input');
      await atRest(server);
      assert.ok(maxDiff(await positions(server), TARGET) < 1e-3, 'at the target');
      const back = (await client.callTool({
        name: 'move_to_joints',
        arguments: { joints: WORK, speed: 1 },
      })) as ToolResult;
      assert.ok(!back.isError, 'back to work');
      await atRest(server);
    } finally {
      await client.close();
    }
  });

  for (const answer of [{ action: 'decline' as const }, { action: 'accept' as const, confirm: false }]) {
    it(`refuses the motion when the person answers ${answer.action}${answer.confirm === false ? ' with no' : ''}: nothing moves`, async () => {
      const { client, asked } = await connect(server, answer);
      try {
        const before = await positions(server);
        const result = (await client.callTool({
          name: 'move_to_joints',
          arguments: { joints: TARGET, speed: 1 },
        })) as ToolResult;
        assert.equal(result.isError, true, 'a tool error');
        assert.match(result.content.map((c) => c.text).join(' '), /did not confirm the motion/, 'saying why');
        assert.equal(asked.length, 1, 'asked once');
        assert.ok(maxDiff(await positions(server), before) < 1e-9, 'nothing moved');
        const dry = (await client.callTool({
          name: 'move_to_joints',
          arguments: { joints: TARGET, speed: 1, dry_run: true },
        })) as ToolResult;
        assert.ok(!dry.isError && dry.structuredContent?.plan, 'a dry run is not put to the person');
        assert.equal(asked.length, 1, 'still asked once');
        const read = (await client.callTool({ name: 'get_joint_states', arguments: {} })) as ToolResult;
        assert.ok(!read.isError, 'reads are never put to the person');
      } finally {
        await client.close();
      }
    });
  }

  it('never moves when the call is cancelled while the person is asked, even if they then say yes', async () => {
    const { client, question, answer } = await connectAsking(server);
    try {
      const before = await positions(server);
      const cancel = new AbortController();
      const call = client.callTool({ name: 'move_to_joints', arguments: { joints: TARGET, speed: 1 } }, undefined, {
        signal: cancel.signal,
      });
      await question;
      cancel.abort('the agent gave up');
      await assert.rejects(call, 'the cancelled call rejects on the client');
      answer(true);
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.ok(maxDiff(await positions(server), before) < 1e-9, 'nothing moved');
      await atRest(server, 1000);
    } finally {
      await client.close();
    }
  });

  it('refuses the motion when a stop comes while the person is asked, even if they then say yes', async () => {
    const { client, question, answer } = await connectAsking(server);
    try {
      const before = await positions(server);
      const call = client.callTool({ name: 'move_to_joints', arguments: { joints: TARGET, speed: 1 } });
      await question;
      const stopped = await server.request('/stop', { method: 'POST' });
      assert.equal(stopped.status, 200, 'the stop answers while the question is open');
      answer(true);
      const result = (await call) as ToolResult;
      assert.equal(result.isError, true, 'refused');
      assert.match(result.content.map((c) => c.text).join(' '), /a stop arrived while this request was being prepared/);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.ok(maxDiff(await positions(server), before) < 1e-9, 'nothing moved');
    } finally {
      await client.close();
    }
  });

  it('asks before set_override raises the override; never asks, nor waits, when it lowers it', async () => {
    const override = async () =>
      ((await (await server.request('/robot/override')).json()) as { percent: number }).percent;
    const declining = await connect(server, { action: 'decline' });
    const asking = await connectAsking(server);
    try {
      const lowered = (await declining.client.callTool({
        name: 'set_override',
        arguments: { percent: 40 },
      })) as ToolResult;
      assert.ok(!lowered.isError, JSON.stringify(lowered.content));
      assert.equal(declining.asked.length, 0, 'lowering is not put to the person');
      const raised = (await declining.client.callTool({
        name: 'set_override',
        arguments: { percent: 90 },
      })) as ToolResult;
      assert.equal(raised.isError, true, 'a raise the person declines is refused');
      assert.match(raised.content.map((c) => c.text).join(' '), /did not confirm/);
      assert.equal(declining.asked.length, 1, 'asked once');
      assert.match(declining.asked[0] ?? '', /set_override .*90/, 'the question names the tool and its input');
      assert.equal(await override(), 40, 'the override is unchanged');
      // A raise waits for its person; a lowering meanwhile is not held behind it.
      const raise = asking.client.callTool({ name: 'set_override', arguments: { percent: 100 } });
      await asking.question;
      const lower = (await asking.client.callTool({
        name: 'set_override',
        arguments: { percent: 20 },
      })) as ToolResult;
      assert.ok(!lower.isError, JSON.stringify(lower.content));
      assert.equal(await override(), 20, 'lowered while the raise is still asked');
      asking.answer(true);
      assert.ok(!((await raise) as ToolResult).isError, 'the confirmed raise is made');
      assert.equal(await override(), 100);
    } finally {
      await server.request('/robot/override', {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ percent: 100 }),
      });
      await declining.client.close();
      await asking.client.close();
    }
  });

  it('refuses a raise of the override when a stop comes while the person is asked, even if they then say yes', async () => {
    const override = async () =>
      ((await (await server.request('/robot/override')).json()) as { percent: number }).percent;
    const setOverride = (percent: number) =>
      server.request('/robot/override', {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ percent }),
      });
    const asking = await connectAsking(server);
    try {
      assert.equal((await setOverride(30)).status, 200);
      const raise = asking.client.callTool({ name: 'set_override', arguments: { percent: 90 } });
      await asking.question;
      const stopped = await server.request('/stop', { method: 'POST' });
      assert.equal(stopped.status, 200, 'the stop answers while the question is open');
      asking.answer(true);
      const result = (await raise) as ToolResult;
      assert.equal(result.isError, true, `refused: ${JSON.stringify(result.content)}`);
      assert.match(
        result.content.map((c) => c.text).join(' '),
        /a stop arrived after this request; the override was not raised \(it stays 30 %\)/,
      );
      assert.equal(await override(), 30, 'the override is unchanged');
      // A lowering sent after the stop is made, and so is a raise sent after it (the person asked again).
      const lower = (await asking.client.callTool({ name: 'set_override', arguments: { percent: 20 } })) as ToolResult;
      assert.ok(!lower.isError, JSON.stringify(lower.content));
      assert.equal(await override(), 20);
      const again = (await asking.client.callTool({ name: 'set_override', arguments: { percent: 50 } })) as ToolResult;
      assert.ok(!again.isError, JSON.stringify(again.content));
      assert.equal(await override(), 50);
    } finally {
      assert.equal((await setOverride(100)).status, 200);
      await asking.client.close();
    }
  });

  it('refuses at once a motion from a client that takes only JSON answers: it cannot be asked, nothing moves', async () => {
    const client = mcpClient('confirm-test', { capabilities: { elicitation: {} } });
    let questions = 0;
    client.setRequestHandler(ElicitRequestSchema, async () => {
      questions++;
      return { action: 'accept', content: { confirm: true } };
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('http://127.0.0.1:8007/mcp/mcp'), {
        fetch: (input, init) => {
          const headers = new Headers(init?.headers);
          headers.set('accept', 'application/json');
          return server.request(String(input), { ...init, headers });
        },
      }),
    );
    try {
      const before = await positions(server);
      const result = (await client.callTool({
        name: 'move_to_joints',
        arguments: { joints: TARGET, speed: 1 },
      })) as ToolResult;
      assert.equal(result.isError, true, 'a tool error');
      assert.match(
        result.content.map((c) => c.text).join(' '),
        /could not be asked to confirm the motion .*accepts only a JSON answer.*nothing moved/,
        'saying why',
      );
      assert.equal(questions, 0, 'no question reached the client');
      assert.ok(maxDiff(await positions(server), before) < 1e-9, 'nothing moved');
    } finally {
      await client.close();
    }
  });

  it('runs as without the setting for a client that cannot elicit', async () => {
    const { client } = await connect(server);
    try {
      const result = (await client.callTool({
        name: 'move_to_joints',
        arguments: { joints: WORK, speed: 1 },
      })) as ToolResult;
      assert.ok(!result.isError, JSON.stringify(result.content));
      assert.equal(result.structuredContent?.success, true, 'moved (already at work)');
    } finally {
      await client.close();
    }
  });

  it('still asks after a flood of sessions rebuilt the session and forgot what its client declared', async () => {
    // 256 sessions are held and what 4,096 declared is kept: past both, a session is rebuilt from its id alone (it
    // asked nobody then, and a move its person declines ran). A client that cannot elicit still runs as before.
    const asking = await connect(server, { action: 'decline' });
    const plain = await connect(server);
    const flood = JSON.stringify(initializeRequest('flood'));
    try {
      for (let i = 0; i < 4400; i++) {
        const answer = await server.request('/mcp/mcp', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: flood,
        });
        assert.equal(answer.status, 200, 'a session opened');
        await answer.body?.cancel();
      }
      const before = await positions(server);
      const result = (await asking.client.callTool({
        name: 'move_to_joints',
        arguments: { joints: TARGET, speed: 1 },
      })) as ToolResult;
      assert.equal(asking.asked.length, 1, 'the person is asked in the rebuilt session');
      assert.equal(result.isError, true, JSON.stringify(result.content));
      assert.match(result.content.map((c) => c.text).join(' '), /did not confirm the motion \(decline\)/);
      assert.ok(maxDiff(await positions(server), before) < 1e-9, 'nothing moved');
      const ran = (await plain.client.callTool({
        name: 'move_to_joints',
        arguments: { joints: WORK, speed: 1 },
      })) as ToolResult;
      assert.ok(!ran.isError, `a client that cannot elicit is not asked: ${JSON.stringify(ran.content)}`);
    } finally {
      await asking.client.close();
      await plain.client.close();
    }
  });
});

describe("a session's JSON Schema validator (lib/mcp/lazy-validator.ts)", () => {
  const confirmSchema = {
    type: 'object',
    properties: { confirm: { type: 'boolean' } },
    required: ['confirm'],
  } as const;

  it("is built on its first use only, once, and judges as the SDK's default validator does", () => {
    let built = 0;
    const validator = lazySchemaValidator(() => {
      built++;
      return new AjvJsonSchemaValidator();
    });
    assert.equal(built, 0, 'nothing built with the session');
    const check = validator.getValidator(confirmSchema);
    const again = validator.getValidator(confirmSchema);
    assert.equal(built, 1, 'built once, at the first schema');
    const sdk = new AjvJsonSchemaValidator().getValidator(confirmSchema);
    for (const input of [{ confirm: true }, { confirm: 'yes' }, {}, null]) {
      assert.deepEqual(check(input), sdk(input), `${JSON.stringify(input)} judged alike`);
      assert.deepEqual(again(input), sdk(input), `${JSON.stringify(input)} judged alike the second time`);
    }
    assert.equal(check({ confirm: true }).valid, true);
    assert.equal(check({ confirm: 'yes' }).valid, false);
  });
});
