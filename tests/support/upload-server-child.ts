/**
 * A test server in a child process of its own whose memory a test reads (tests/server/uploads-memory.test.ts): it
 * sends its URL, then answers `memory` with its RSS once collected (it runs with --expose-gc) and ends on `close`.
 */
import { startTestServer } from './server.ts';

const server = await startTestServer();
const collect = (globalThis as { gc?: () => void }).gc;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
process.on('message', async (message) => {
  if (message === 'memory') {
    // Collected twice a little apart: buffers freed by the first are swept off the thread meanwhile.
    for (let i = 0; i < 3; i++) {
      collect?.();
      await sleep(300);
    }
    process.send?.({ rss: process.memoryUsage().rss });
  } else if (message === 'close') {
    await server.close();
    process.exit(0);
  }
});
process.send?.({ url: server.url });
