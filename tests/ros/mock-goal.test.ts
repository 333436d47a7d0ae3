import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { goalOf, type ServerGoalHandle } from './mock-stack/server-api.ts';

// rclnodejs's server goal handle carries the goal as a generated message instance whose fields are
// getters on the prototype (plainOf would see none of them); the mock stack reads it with the
// instance's own toPlainObject().

class GeneratedGoal {
  readonly #joints = Float64Array.from([0.1, 0.2, 0.3, -1, 0, 1, 0]);
  get joints(): Float64Array {
    return this.#joints;
  }
  get speed(): number {
    return 0.5;
  }
  toPlainObject(): object {
    return { joints: this.#joints, speed: 0.5 };
  }
}

const handle = (request: object): ServerGoalHandle => ({
  request,
  isCancelRequested: false,
  publishFeedback: () => undefined,
  succeed: () => undefined,
  abort: () => undefined,
  canceled: () => undefined,
});

describe('mock stack: reading a goal handle the way rclnodejs hands it over', () => {
  it('reads a generated message instance through toPlainObject, typed arrays as arrays', () => {
    const request = new GeneratedGoal();
    assert.deepEqual(Object.keys(request), [], 'the fields are not own properties');
    assert.deepEqual(goalOf(handle(request)), { joints: [0.1, 0.2, 0.3, -1, 0, 1, 0], speed: 0.5 });
  });

  it('reads a plain object (a stand-in) as it is', () => {
    assert.deepEqual(goalOf(handle({ joints: [1, 2], speed: 1 })), { joints: [1, 2], speed: 1 });
  });
});
