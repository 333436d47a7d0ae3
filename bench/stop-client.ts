/**
 * The /stop client of the stop bench (forked by stop.ts), so that the latency it times is the
 * server's and not this client's turns on a shared event loop: on each `{ url }` message it sends
 * POST /stop and answers `{ ms }` (or `{ error }`); ends when the parent disconnects.
 */
process.on('message', (message: unknown) => {
  const url = (message as { url?: unknown }).url;
  if (typeof url !== 'string') {
    process.send?.({ error: 'bad request' });
    return;
  }
  const t0 = performance.now();
  fetch(`${url}/stop`, { method: 'POST' })
    .then(async (res) => {
      await res.arrayBuffer();
      process.send?.(res.status === 200 ? { ms: performance.now() - t0 } : { error: `/stop answered ${res.status}` });
    })
    .catch((e: unknown) => process.send?.({ error: e instanceof Error ? e.message : String(e) }));
});
process.on('disconnect', () => process.exit(0));
process.send?.({ ready: true });
