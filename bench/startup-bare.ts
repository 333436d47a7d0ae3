// The bench's tsx-only floor (bench/startup.ts): the bare node:http server as TypeScript run through tsx.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const server = createServer((_req, res) => res.end('x'));
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
