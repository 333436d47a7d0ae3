import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PLANNERS } from '../../lib/motion/vocabulary.ts';
import { plannerFor, POSE_PLANNER_NAMES, POSE_PLANNERS } from '../../lib/planning/planners.ts';

describe('the planner table (lib/planning/planners.ts)', () => {
  it('has one planner for every name the motion vocabulary accepts, and no other', () => {
    assert.deepEqual([...POSE_PLANNER_NAMES].sort(), [...PLANNERS].sort(), 'the same names');
  });

  it('finds a planner by its name in any case', () => {
    for (const name of POSE_PLANNER_NAMES) {
      const found = plannerFor(name.toUpperCase());
      assert.ok(found.ok && found.value === POSE_PLANNERS[name], `${name} found`);
    }
  });

  it('refuses an unknown name, listing the known ones, and never returns an inherited property', () => {
    for (const name of ['rrt', 'constructor', 'toString', '__proto__']) {
      const found = plannerFor(name);
      assert.ok(!found.ok, `${name} is no planner`);
      assert.equal(found.error, `unknown planner '${name}'; use one of ptp, lin, circ, ompl, chomp`);
    }
  });
});
