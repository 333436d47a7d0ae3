/**
 * Every request body of the served OpenAPI document has an example, and each works as sent on the
 * simulated arm (issue 25): what the docs page's Try-it-out pre-fills is a 200, a motion that
 * succeeds, a sequence that finishes with 0. The document names its server. The app in memory on a clock the test
 * steps (tests/support/stepped.ts): each request steps it until answered, a trajectory's duration is a time of it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { SteppedClock } from '../../lib/clock.ts';
import { getJson, type InMemory, waitFor } from '../support/live.ts';
import type { TestApp } from '../support/server.ts';
import { atRestOnClock, createSteppedApp, steppedTarget } from '../support/stepped.ts';

interface MediaType {
  schema: { properties?: Record<string, { format?: string }> };
  example?: Record<string, unknown>;
}
interface Operation {
  operationId: string;
  parameters?: { name: string; in: string; example?: unknown }[];
  requestBody?: { content: Record<string, MediaType> };
}
interface Document {
  servers?: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
}

/** The simulator's time_scale: a trajectory of d s takes d / SIM_TIME_SCALE s of the clock. */
const SIM_TIME_SCALE = 10;

describe('the request examples of /openapi.json work as sent on the simulator', () => {
  let server: TestApp;
  let clock: SteppedClock;
  /** The app, each request stepping the clock until it is answered. */
  let app: InMemory;
  let doc: Document;
  before(async () => {
    ({ app: server, clock } = await createSteppedApp({ sim: { time_scale: SIM_TIME_SCALE } }));
    app = steppedTarget(server, clock);
    doc = await getJson<Document>(app, '/openapi.json');
  });
  after(async () => {
    await server.close();
  });

  it('names the server that serves it', () => {
    assert.deepEqual(
      doc.servers?.map((s) => s.url),
      ['/'],
    );
  });

  it('every request body has an example, and sending it as it is succeeds', async () => {
    const bodies = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([, op]) => op.requestBody)
        .map(([method, op]) => ({ path, method, op })),
    );
    assert.ok(bodies.length >= 7, `${bodies.length} operations take a body`);
    for (const { path, method, op } of bodies) {
      const [type, media] = Object.entries(op.requestBody?.content ?? {})[0] ?? [];
      assert.ok(type && media?.example, `${op.operationId} has an example`);
      let body: string | FormData;
      const headers: Record<string, string> = {};
      if (type === 'application/json') {
        body = JSON.stringify(media.example);
        headers['content-type'] = type;
      } else {
        // A form: fields as they are, a file part (format binary) as a file holding the example's text.
        const form = new FormData();
        for (const [name, value] of Object.entries(media.example)) {
          if (media.schema.properties?.[name]?.format === 'binary')
            form.append(name, new Blob([String(value)]), `${name}.example`);
          else form.append(name, String(value));
        }
        body = form;
      }
      // Path parameters as Try-it-out fills them: each with its example.
      const target = path.replace(/\{(\w+)\}/g, (_whole, name: string) => {
        const example = op.parameters?.find((p) => p.in === 'path' && p.name === name)?.example;
        assert.ok(example !== undefined, `${op.operationId}: the path parameter ${name} has an example`);
        return encodeURIComponent(String(example));
      });
      const res = await app.request(target, { method: method.toUpperCase(), headers, body });
      const answer = (await res.json()) as Record<string, unknown>;
      assert.equal(res.status, 200, `${op.operationId}: ${JSON.stringify(answer)}`);
      assert.notEqual(answer.success, false, `${op.operationId} succeeds: ${JSON.stringify(answer)}`);
      if (op.operationId === 'startSequence') {
        // The runner is a process of its own: polled in the machine's time (each poll steps the clock a little).
        const done = await waitFor(
          'the example sequence to finish',
          () => getJson<{ status: string; returncode?: number }>(app, '/sequences/status'),
          (s) => s.status === 'finished',
          30_000,
          25,
        );
        assert.equal(done.returncode, 0, 'the example sequence ran through');
      }
      if (path.startsWith('/trajectory/')) {
        // A trajectory answers when it is sent: let the arm finish before the next example. Its duration
        // (4 s, 0.4 s at time_scale 10) first: the examples turn back at their middle point, where every
        // velocity is 0 for an instant, so a state at rest alone does not say the trajectory is over. The answer's
        // time_scale is the trajectory's own (always 1); the simulator's runs it SIM_TIME_SCALE times faster on its clock.
        const { duration, time_scale } = answer as { duration: number; time_scale: number };
        await clock.advance((duration / time_scale / SIM_TIME_SCALE) * 1000);
        await atRestOnClock(app, clock, 10_000);
      }
    }
  });
});
