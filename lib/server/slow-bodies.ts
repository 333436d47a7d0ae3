/**
 * Request bodies that do not arrive at a minimum rate (web.limits.body_grace_s, body_min_bytes_per_s): after the grace
 * a body must have averaged at least the rate since its headers came, or it is cut with 408. One timer watches every
 * body in flight; a body the app is not reading yet (bytes waiting in its buffer) is not the client's delay and is
 * not cut.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BodyTimeoutError } from '../http/body.ts';

export interface BodyRate {
  readonly graceMs: number;
  readonly minBytesPerS: number;
}

interface Watched {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly startMs: number;
  readonly startBytes: number;
}

/** How often bodies are looked at (ms). */
const CHECK_EVERY_MS = 250;
/** Bodies cut in one turn of the event loop: a crowd found slow at once is cut over several turns, so that a stop
 * arriving meanwhile is not queued behind hundreds of answers and closes. */
const CUTS_PER_TURN = 16;

/**
 * Watches bodies; `cut` is called once for a body found too slow, with the error its readers are to fail with (the
 * caller answers 408 and ends the connection).
 */
export function watchBodies(
  rate: BodyRate,
  cut: (req: IncomingMessage, res: ServerResponse, error: BodyTimeoutError) => void,
): { watch(req: IncomingMessage, res: ServerResponse): void; close(): void } {
  const watched = new Set<Watched>();
  let timer: NodeJS.Timeout | undefined;
  /** Bodies found too slow, waiting for their turn to be cut. */
  const toCut: { readonly req: IncomingMessage; readonly res: ServerResponse; readonly error: BodyTimeoutError }[] = [];
  let cutting = false;
  const cutSome = () => {
    for (const { req, res, error } of toCut.splice(0, CUTS_PER_TURN))
      if (!req.destroyed && !res.writableEnded) cut(req, res, error);
    cutting = toCut.length > 0;
    if (cutting) setImmediate(cutSome);
  };
  const check = () => {
    const now = performance.now();
    for (const w of watched) {
      const { req, res } = w;
      if (req.complete || res.writableEnded || req.destroyed) {
        watched.delete(w);
        continue;
      }
      const elapsedMs = now - w.startMs;
      if (elapsedMs < rate.graceMs) continue;
      const received = (req.socket?.bytesRead ?? 0) - w.startBytes;
      // Bytes the app has not taken yet: the reader is slow, not the client.
      if (req.readableLength > 0) continue;
      if (received >= (rate.minBytesPerS * elapsedMs) / 1000) continue;
      watched.delete(w);
      toCut.push({
        req,
        res,
        error: new BodyTimeoutError(
          `the request body arrived at ${((received * 1000) / elapsedMs).toFixed(1)} bytes/s over ${(elapsedMs / 1000).toFixed(1)} s; at least ${rate.minBytesPerS} bytes/s is needed (web.limits.body_min_bytes_per_s)`,
        ),
      });
    }
    if (toCut.length > 0 && !cutting) {
      cutting = true;
      cutSome();
    }
    if (watched.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };
  return {
    watch(req, res) {
      const w = { req, res, startMs: performance.now(), startBytes: req.socket?.bytesRead ?? 0 };
      watched.add(w);
      // Forgotten as soon as the exchange is over: held until the next check, every request with a body outlived two
      // young-generation collections and was promoted (issue 23: the old generation's churn under work).
      res.once('close', () => watched.delete(w));
      if (!timer) {
        timer = setInterval(check, CHECK_EVERY_MS);
        timer.unref();
      }
    },
    close() {
      if (timer) clearInterval(timer);
      timer = undefined;
      watched.clear();
      toCut.length = 0;
    },
  };
}
