import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatWalk, parseWalk, walk } from '../scripts/walk.ts';

/** Issue 35's target: GET /robot/joint_states through at most 10 files of lib/ and handlers/. */
const TARGET_FILES = 10;
/** What the walk measures today: it may only come down (toward the target), never go up. */
const CEILING_FILES = 19;

describe('the walk of a request (scripts/walk.ts: V8 precise coverage around one request over a socket)', () => {
  it(`GET /robot/joint_states runs through at most ${CEILING_FILES} files of lib/ and handlers/ (target ${TARGET_FILES}), on a new connection and on one kept alive`, async () => {
    const [report] = await walk([parseWalk('GET /robot/joint_states')]);
    assert.ok(report);
    const text = formatWalk(report);
    assert.deepEqual(report.background, [], `nothing of the app runs without a request:\n${text}`);
    for (const walked of report.walks) {
      assert.equal(walked.status, 200, text);
      const files = walked.files.map((f) => f.file);
      // The walk sees the request's whole way: the socket's listener, the route table, the handler file, the backend.
      for (const file of ['lib/server/listener.ts', 'lib/http/routes.ts', 'handlers/robot/joint-states.ts'])
        assert.ok(files.includes(file), `${file} on the walk:\n${text}`);
      assert.ok(files.length <= CEILING_FILES, `${files.length} files (at most ${CEILING_FILES}):\n${text}`);
    }
  });
});
