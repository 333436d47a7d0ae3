/**
 * A test server in a child process of its own whose memory a test reads (tests/server/uploads-memory.test.ts): it
 * sends its URL, then answers `memory` with its RSS once the server is idle (the upload buffers kept let go, the
 * checker's thread ended: each after its own idle time) and collected (it runs with --expose-gc); ends on `close`.
 */
import { keptUploadBuffers } from '../../lib/body/upload-pool.ts';
import { trajectoryCheckerRunning } from '../../lib/trajectory/worker-pool.ts';
import { startTestServer } from './server.ts';

const server = await startTestServer();
const collect = (globalThis as { gc?: () => void }).gc;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
process.on('message', async (message) => {
  if (message === 'memory') {
    // Idle as the server makes itself (at most 20 s, then measured as it is: the test says what it finds).
    for (let waited = 0; waited < 20_000 && (keptUploadBuffers() > 0 || trajectoryCheckerRunning()); waited += 100)
      await sleep(100);
    // Collected twice a little apart: buffers freed by the first are swept off the thread meanwhile.
    for (let i = 0; i < 3; i++) {
      collect?.();
      await sleep(300);
    }
    process.send?.(process.memoryUsage());
  } else if (message === 'close') {
    await server.close();
    process.exit(0);
  }
});
process.send?.({ url: server.url });
