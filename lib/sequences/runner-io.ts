/**
 * The sequence runner's output lines and IPC messages, made safe for the moment armgate goes away:
 * when the server process dies (SIGKILL included) the runner's stdout and stderr pipes break (EPIPE)
 * and its IPC channel closes. Errors on both streams and on the channel are handled, never thrown;
 * whatever is written after a pipe broke is dropped; and the first sign that the server is gone
 * (the channel's 'disconnect', a stream error, a failed send) is reported once to `onGone`.
 */
import type { RunnerToServer } from './protocol.ts';

/** Writing to the server that started the runner. */
export interface RunnerIo {
  /** A line on stdout (dropped once stdout is broken). */
  log(line: string): void;
  /** A line on stderr (dropped once stderr is broken). */
  warn(line: string): void;
  /** A message over the IPC channel (dropped once it is closed). */
  send(message: RunnerToServer): void;
}

/** Attaches the handlers to this process's stdout, stderr and IPC channel; `onGone` gets the first reason the server is gone. */
export function attachRunnerIo(onGone: (reason: string) => void): RunnerIo {
  let gone = false;
  const lost = (reason: string) => {
    if (gone) return;
    gone = true;
    onGone(reason);
  };
  const writer = (stream: NodeJS.WriteStream, name: string) => {
    let broken = false;
    stream.on('error', (error: NodeJS.ErrnoException) => {
      broken = true;
      lost(`${name}: ${error.code ?? error.message}`);
    });
    return (line: string) => {
      if (broken || stream.destroyed || !stream.writable) return;
      stream.write(`${line}\n`);
    };
  };
  const log = writer(process.stdout, 'stdout');
  const warn = writer(process.stderr, 'stderr');
  process.on('disconnect', () => lost('its IPC channel closed'));
  const send = (message: RunnerToServer) => {
    if (!process.connected || !process.send) return;
    process.send(message, undefined, undefined, (error: Error | null) => {
      if (error) lost(`IPC: ${(error as NodeJS.ErrnoException).code ?? error.message}`);
    });
  };
  return { log, warn, send };
}
