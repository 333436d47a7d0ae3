/** How a wait on a ROS call ended: its value, a timeout, an abort (stop, motion timeout) or an error. */
export type Outcome<T> =
  | { readonly kind: 'value'; readonly value: T }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'aborted'; readonly reason: string }
  | { readonly kind: 'error'; readonly message: string };

/** The abort reason as a sentence ('cancelled' when it is not a string). */
export function reasonOf(signal: AbortSignal): string {
  return typeof signal.reason === 'string' ? signal.reason : 'cancelled';
}

/**
 * Waits for `promise` at most `timeoutMs` (Infinity: no limit) and until `signal` aborts; never
 * rejects. A promise that settles later is still observed, so its rejection is never unhandled.
 */
export function settle<T>(promise: Promise<T>, timeoutMs: number, signal?: AbortSignal): Promise<Outcome<T>> {
  return new Promise((resolve) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const onAbort = () => done({ kind: 'aborted', reason: signal ? reasonOf(signal) : 'cancelled' });
    const done = (outcome: Outcome<T>) => {
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    promise.then(
      (value) => done({ kind: 'value', value }),
      (e: unknown) => done({ kind: 'error', message: e instanceof Error ? e.message : String(e) }),
    );
    if (signal?.aborted) {
      onAbort();
      return;
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    if (Number.isFinite(timeoutMs)) timer = setTimeout(() => done({ kind: 'timeout' }), Math.max(0, timeoutMs));
  });
}
