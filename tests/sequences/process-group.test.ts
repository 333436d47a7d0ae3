import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseProcStat } from '../../lib/sequences/process-group.ts';

describe('parseProcStat', () => {
  it('reads the state and the process group after the command name', () => {
    assert.deepEqual(parseProcStat('4242 (node) S 4200 4242 4200 0 -1 4194560 1200 0 0 0'), { state: 'S', pgid: 4242 });
    assert.deepEqual(parseProcStat('77 (esbuild) Z 1 4242 4200 0 -1'), { state: 'Z', pgid: 4242 });
  });

  it('takes a command name with spaces and parentheses up to the last closing one', () => {
    assert.deepEqual(parseProcStat('9 (a (b) c) R 1 31 31 0'), { state: 'R', pgid: 31 });
  });

  it('answers undefined to a line that is not a stat line', () => {
    assert.equal(parseProcStat(''), undefined);
    assert.equal(parseProcStat('12 node S 1 2'), undefined);
    assert.equal(parseProcStat('12 (node)'), undefined);
    assert.equal(parseProcStat('12 (node) S 1 x'), undefined);
  });
});
