/**
 * The load generator's process (forked by http-joint-states.ts): says `{ ready: true }` once it
 * listens, runs each `LoadRequest` it is sent and answers `{ ok: true, result }` or
 * `{ ok: false, error }`; ends when the parent disconnects.
 */
import { type LoadRequest, runLoad } from './load.ts';

function isLoadRequest(m: unknown): m is LoadRequest {
  if (typeof m !== 'object' || m === null) return false;
  const r = m as Record<string, unknown>;
  return typeof r.url === 'string' && typeof r.connections === 'number' && typeof r.seconds === 'number';
}

process.on('message', (message: unknown) => {
  const reply = (answer: unknown) => process.send?.(answer);
  if (!isLoadRequest(message)) {
    reply({ ok: false, error: 'bad load request' });
    return;
  }
  runLoad(message).then(
    (result) => reply({ ok: true, result }),
    (error: unknown) => reply({ ok: false, error: error instanceof Error ? error.message : String(error) }),
  );
});
process.on('disconnect', () => process.exit(0));
process.send?.({ ready: true });
