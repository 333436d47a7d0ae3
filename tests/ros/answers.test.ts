import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ikFailureMessage, trajectoryGoalOutcome } from '../../lib/ros/answers.ts';
import {
  FJT_GOAL_TOLERANCE_VIOLATED,
  FJT_INVALID_GOAL,
  FJT_INVALID_JOINTS,
  FJT_PATH_TOLERANCE_VIOLATED,
  FJT_SUCCESSFUL,
  MOVEIT_INVALID_LINK_NAME,
  MOVEIT_NO_IK_SOLUTION,
} from '../../lib/ros/messages.ts';

const ended = (succeeded: boolean, canceled: boolean, errorCode: number, errorString = '') => ({
  succeeded,
  canceled,
  errorCode,
  errorString,
});

describe('what the stack answers means to a caller', () => {
  it('maps every way the joint trajectory controller ends a goal to an outcome, with its text', () => {
    const cases: [ReturnType<typeof ended>, string, RegExp][] = [
      [ended(true, false, FJT_SUCCESSFUL), 'finished', /^the controller finished the trajectory$/],
      // jazzy: a newer goal aborts the active one with INVALID_GOAL and this text
      [
        ended(false, false, FJT_INVALID_GOAL, 'Current goal preempted by new incoming action.'),
        'preempted',
        /a newer goal replaced it\): Current goal preempted/,
      ],
      // humble: CANCELED with SUCCESSFUL
      [
        ended(false, true, FJT_SUCCESSFUL, 'Current goal cancelled due to new incoming action.'),
        'preempted',
        /cancelled the trajectory goal/,
      ],
      [ended(false, false, FJT_PATH_TOLERANCE_VIOLATED, 'joint2'), 'stopped', /path tolerance violated: joint2$/],
      [ended(false, false, FJT_GOAL_TOLERANCE_VIOLATED), 'timeout', /within its tolerance in time$/],
      // INVALID_GOAL for another reason is a refusal, not a preemption
      [ended(false, false, FJT_INVALID_GOAL, 'Empty trajectory'), 'refused', /error_code -1\): Empty trajectory$/],
      [ended(false, false, FJT_INVALID_JOINTS), 'refused', /error_code -2/],
      // SUCCEEDED with an error code is not a success
      [ended(true, false, FJT_PATH_TOLERANCE_VIOLATED), 'stopped', /path tolerance/],
    ];
    for (const [end, outcome, message] of cases) {
      const answer = trajectoryGoalOutcome(end);
      assert.equal(answer.outcome, outcome, JSON.stringify(end));
      assert.match(answer.message, message, JSON.stringify(end));
    }
  });

  it('says why MoveIt found no IK solution, naming what the endpoints file sets', () => {
    const request = { x: 0.4, y: 0, z: 2, a: 0, b: 0, c: 0, collision_check: true, frame_id: '' };
    const names = { tcp_link: 'tcp', planning_group: 'iiwa_arm', ik_s: 0.05 };
    assert.match(
      ikFailureMessage(MOVEIT_NO_IK_SOLUTION, 'world', request, names),
      /^no IK solution for \[0\.4000, 0\.0000, 2\.0000\] m within the joint limits and free of collisions/,
    );
    assert.match(ikFailureMessage(MOVEIT_INVALID_LINK_NAME, 'world', request, names), /TCP link 'tcp' \(set tcp_link/);
  });
});
