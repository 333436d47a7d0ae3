/**
 * Every operation of the catalog declares the services it reaches (`needs`, lib/core/operation.ts; the type holds each
 * name to a service of the bag): its run is handed those only, so a handler cannot reach what it did not declare.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { catalog } from '../../handlers/index.ts';

describe('the services each operation needs', () => {
  it('are declared by every operation of the catalog (an operation that declares none would reach all)', () => {
    const operations = [...catalog.operations, catalog.stop, ...(catalog.websockets ?? []).map((w) => w.operation)];
    const undeclared = operations.filter((op) => op.needs === undefined).map((op) => op.name);
    assert.deepEqual(undeclared, []);
  });
});
