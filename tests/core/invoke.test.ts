import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as v from 'valibot';
import { statusOf } from '../../lib/core/errors.ts';
import { type CallFacts, deferred, invoke } from '../../lib/core/invoke.ts';
import { defineOperation } from '../../lib/core/operation.ts';
import { ok } from '../../lib/result.ts';
import type { RobotContext } from '../../lib/ros/context.ts';
import { servicesFor } from '../support/services.ts';

describe('the call pipeline (invoke), as any face calls it', () => {
  let runs = 0;
  const move = defineOperation({
    name: 'invoke_probe_move',
    summary: 'probe',
    description: 'A motion that moves nothing; see {op:invoke_probe_read}.',
    effect: 'motion',
    idempotent: false,
    input: v.strictObject({ to: v.number(), dry_run: v.optional(v.boolean()) }),
    output: v.object({ success: v.boolean(), message: v.string() }),
    errors: {},
    mcp: { title: 'probe' },
    run: async ({ to }) => {
      runs++;
      return ok({ success: true, message: `at ${to}; read it with {op:invoke_probe_read}` });
    },
  });
  const read = defineOperation({
    name: 'invoke_probe_read',
    summary: 'probe',
    description: 'Answers an output its schema refuses.',
    effect: 'read',
    idempotent: true,
    output: v.object({ count: v.number() }),
    errors: {},
    rest: { method: 'GET', path: '/invoke-probe', operationId: 'invokeProbe', tags: [], ok: 'count' },
    mcp: { title: 'probe' },
    run: async () => ok({ count: 'many' } as unknown as { count: number }),
  });
  const context = { limits: {} } as unknown as RobotContext;
  const facts = (over: Partial<CallFacts> = {}): CallFacts => ({
    services: servicesFor(context),
    ros: context,
    caller: { name: 'probe', role: 'operate' },
    face: 'mcp',
    calledAs: 'the probe',
    arrivedAtStop: undefined,
    ...over,
  });

  it('refuses a role too weak before its input is read (a deferred reader never runs) and answers 403', async () => {
    let reads = 0;
    const input = deferred(() => {
      reads++;
      return ok({ fields: { to: 1 } });
    });
    const result = await invoke(move, input, facts({ caller: { name: 'viewer', role: 'read' } }));
    assert.equal(result.ok, false);
    assert.equal(!result.ok && statusOf(result.error), 403);
    assert.equal(reads, 0, 'the input was not read');
  });

  it('validates with the schema and locates the issue as the face says', async () => {
    const result = await invoke(move, { to: 'x' }, facts({ locate: () => 'body' }));
    assert.ok(!result.ok && result.error.kind === 'validation');
    assert.deepEqual(result.error.issues[0]?.loc, ['body', 'to']);
    assert.equal(statusOf(result.error), 422);
  });

  it('puts only a motion that would move to the confirmation (a dry run is not asked)', async () => {
    const asked: unknown[] = [];
    const confirm = async (_op: unknown, given: unknown) => {
      asked.push(given);
      return 'said no';
    };
    const before = runs;
    const dry = await invoke(move, { to: 1, dry_run: true }, facts({ confirm }));
    assert.equal(dry.ok, true);
    assert.equal(asked.length, 0, 'a dry run is not put to the person');
    const declined = await invoke(move, { to: 2 }, facts({ confirm }));
    assert.ok(!declined.ok && declined.error.kind === 'forbidden' && declined.error.detail === 'said no');
    assert.deepEqual(asked, [{ to: 2 }]);
    assert.equal(runs, before + 1, 'the declined motion did not run');
  });

  it('says the output texts as the face says them', async () => {
    const mcp = await invoke(move, { to: 3 }, facts());
    assert.ok(mcp.ok);
    assert.match((mcp.value as { message: string }).message, /read it with invoke_probe_read$/);
    const rest = await invoke(move, { to: 3 }, facts({ face: 'rest' }));
    assert.ok(rest.ok);
    assert.match((rest.value as { message: string }).message, /read it with GET \/invoke-probe$/);
  });

  it('says the texts of one output object read many times as each face and tool naming says them, never as another', async () => {
    // One output object answered at every call (a state read many times between updates), a reference deep in it.
    const said = { notes: [{ text: 'read it with {op:invoke_probe_read}' }], values: [1, 2] };
    const plain = { values: [1, 2], names: ['joint1'] };
    let answer: object = said;
    const repeat = defineOperation({
      name: 'invoke_probe_repeat',
      summary: 'probe',
      description: 'Answers the same output object at every call.',
      effect: 'read',
      idempotent: true,
      output: v.object({ values: v.array(v.number()) }),
      errors: {},
      run: async () => ok(answer as { values: number[] }),
    });
    const textOf = (result: Awaited<ReturnType<typeof invoke>>) => {
      assert.ok(result.ok);
      return (result.value as typeof said).notes[0]?.text;
    };
    const renamed = new Map([['invoke_probe_read', 'probe_reader']]);
    for (let round = 0; round < 2; round++) {
      assert.equal(textOf(await invoke(repeat, {}, facts({ face: 'rest' }))), 'read it with GET /invoke-probe');
      assert.equal(textOf(await invoke(repeat, {}, facts())), 'read it with invoke_probe_read');
      assert.equal(textOf(await invoke(repeat, {}, facts({ toolNames: renamed }))), 'read it with probe_reader');
    }
    assert.equal(said.notes[0]?.text, 'read it with {op:invoke_probe_read}', 'the output object itself is not changed');
    // An output that names no operation is answered as it is, on every face.
    answer = plain;
    for (const face of ['rest', 'mcp'] as const) {
      const result = await invoke(repeat, {}, facts({ face }));
      assert.ok(result.ok);
      assert.equal(result.value, plain);
    }
    // A new output object is checked again: one its schema refuses is the 500, though the one before was answered.
    answer = { values: ['x'] };
    const wrong = await invoke(repeat, {}, facts({ face: 'rest' }));
    assert.ok(!wrong.ok && wrong.error.kind === 'internal' && statusOf(wrong.error) === 500);
  });

  it('answers an output its schema refuses as an internal error (500), naming the field', async () => {
    const result = await invoke(read, {}, facts());
    assert.ok(!result.ok && result.error.kind === 'internal');
    assert.match(result.error.detail, /invoke_probe_read answered an output its schema refuses \(count: /);
    assert.equal(statusOf(result.error), 500);
  });

  it('refuses a call without a caller (401) and never runs it', async () => {
    const before = runs;
    const result = await invoke(move, { to: 1 }, facts({ caller: undefined }));
    assert.ok(!result.ok && statusOf(result.error) === 401);
    assert.equal(runs, before);
  });

  it('hands an operation that declares its needs those services only, the same bag at every call', async () => {
    const seen: object[] = [];
    const narrow = defineOperation({
      name: 'invoke_probe_needs',
      summary: 'probe',
      description: 'Reads the plans only.',
      effect: 'read',
      idempotent: true,
      output: v.object({ services: v.array(v.string()), plans: v.boolean() }),
      errors: {},
      needs: ['plans'],
      run: async (_input, ctx) => {
        seen.push(ctx.services);
        // @ts-expect-error: the arbiter was not declared, so the type of ctx.services has none.
        const undeclared: unknown = ctx.services.arbiter;
        assert.equal(undeclared, undefined);
        return ok({ services: Object.keys(ctx.services), plans: ctx.services.plans !== undefined });
      },
    });
    const bag = facts();
    const first = await invoke(narrow, {}, bag);
    assert.deepEqual(first.ok && first.value, { services: ['plans'], plans: true });
    await invoke(narrow, {}, bag);
    assert.equal(seen[0], seen[1], 'the narrowed bag is made once per operation and app');
    assert.ok(Object.isFrozen(seen[0]));
    // An operation that declares nothing reaches the whole bag, as before.
    const everything: string[] = [];
    const wide = defineOperation({
      name: 'invoke_probe_everything',
      summary: 'probe',
      description: 'Declares no needs.',
      effect: 'read',
      idempotent: true,
      output: v.object({}),
      errors: {},
      run: async (_input, ctx) => {
        everything.push(...Object.keys(ctx.services));
        return ok({});
      },
    });
    await invoke(wide, {}, facts());
    assert.ok(['arbiter', 'control', 'plans', 'sequences', 'trajectoryLog'].every((name) => everything.includes(name)));
  });
});
