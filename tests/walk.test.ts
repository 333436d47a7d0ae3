import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { formatWalk, type WalkReport } from '../scripts/walk.ts';
import { PROJECT_ROOT } from './support/settings-file.ts';

/**
 * The walk measured as `npm run house -- --walk` does, in a process of its own that runs the sources (through tsx): the
 * unit suite runs compiled bundles, whose coverage names no file of lib/ or handlers/.
 */
async function walkOf(spec: string): Promise<WalkReport | undefined> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', 'scripts/walk.ts', '--json', '--walk', spec],
    { cwd: PROJECT_ROOT, maxBuffer: 16 * 1024 * 1024 },
  );
  const last = stdout.trim().split('\n').at(-1) ?? '[]';
  return (JSON.parse(last) as WalkReport[])[0];
}

/** Issue 35's target: GET /robot/joint_states through at most 10 files of lib/ and handlers/. */
const TARGET_FILES = 10;
/**
 * What the walk measures today: it may only come down (toward the target), never go up. 12: an output whose JSON
 * names no operation is not walked for texts (lib/core/operation.ts off the walk); 13: the caps counted in the listener
 * (lib/server/listener.ts), the turn queue beside the request's way (lib/server/request.ts); 15: the app merged with
 * its route table (lib/http/routes.ts), admission and authentication one front door (lib/admission/front-door.ts), a
 * client's served token served without the guess limiter, the roles an operation admits worked out once (20 before).
 * Why not lower with this design (measured: the top-level functions and classes of each file that run for the request,
 * with their comments): the server's are 604 lines (listener.ts 341: the caps and the request callback; request.ts 263:
 * the target's form, the light view, the answer written, the turn order), about 700 with the types and imports they
 * need, so one server file on the walk would pass 500 lines; the REST face's are 352 (routes.ts 242: the table's lookups
 * and the app; rest.ts 110), about 600 with the route types, the table's builder and the codec's helpers; clock.ts (the
 * cache's age check), arbiter.ts (the stop stamp), logs/line.ts (the request's line, in the one ordered buffer) and
 * result.ts (`ok`) are one function each of a module every floor shares.
 */
const CEILING_FILES = 12;

describe('the walk of a request (scripts/walk.ts: V8 precise coverage around one request over a socket)', () => {
  it(`GET /robot/joint_states runs through at most ${CEILING_FILES} files of lib/ and handlers/ (target ${TARGET_FILES}), on a new connection and on one kept alive`, async () => {
    const report = await walkOf('GET /robot/joint_states');
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
