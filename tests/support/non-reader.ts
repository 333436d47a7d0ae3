/** A raw GET /events whose client reads the head of the answer, then nothing until it is told to (tests/events). */
import net from 'node:net';

export interface NonReader {
  readonly socket: net.Socket;
  /** What it has read (the head, then all once reading). */
  text(): string;
  /** Reads on at full speed: what the kernel holds for it, then the server's end of the stream. */
  readAll(): void;
  readonly closed: Promise<void>;
  isClosed(): boolean;
}

/** Opens GET /events?rate_hz=`rate` on 127.0.0.1:`port` with `token`; it takes no byte after the head's read. */
export function nonReader(port: number, token: string, rate = 200): NonReader {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  let text = '';
  let isClosed = false;
  const closed = new Promise<void>((resolve) =>
    socket.on('close', () => {
      isClosed = true;
      resolve();
    }),
  );
  socket.write(
    `GET /events?rate_hz=${rate} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\n\r\n`,
  );
  socket.once('data', (chunk: Buffer) => {
    text += chunk.toString('latin1');
    socket.pause();
  });
  const readAll = () => {
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
    });
    socket.resume();
  };
  return { socket, text: () => text, readAll, closed, isClosed: () => isClosed };
}
