/**
 * The stop client of the stop bench (forked by stop.ts), so that the latency it times is the
 * server's and not this client's turns on a shared event loop: on each `{ url, via }` message it
 * stops the arm, by POST /stop or (via 'mcp') by the MCP stop tool in a session it keeps, and
 * answers `{ ms, sentAtMs }` (sentAtMs: the wall clock's ms since 1970 when it was sent) or `{ error }`; ends when the parent disconnects.
 */
const JSON_ONLY = { 'content-type': 'application/json', accept: 'application/json' };
const sessions = new Map<string, string>();

/** The MCP session of a server (initialized on first use, outside the timing). */
async function session(url: string): Promise<string> {
  const known = sessions.get(url);
  if (known) return known;
  const res = await fetch(`${url}/mcp/mcp`, {
    method: 'POST',
    headers: JSON_ONLY,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'stop-bench', version: '1' } },
    }),
  });
  await res.arrayBuffer();
  const id = res.headers.get('mcp-session-id') ?? '';
  sessions.set(url, id);
  return id;
}

let calls = 0;

/** Stops the arm by MCP: tools/call stop with a JSON answer; resolves when it is answered. */
async function stopByMcp(url: string, id: string): Promise<Response> {
  return fetch(`${url}/mcp/mcp`, {
    method: 'POST',
    headers: { ...JSON_ONLY, 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: ++calls,
      method: 'tools/call',
      params: { name: 'stop', arguments: {} },
    }),
  });
}

process.on('message', (message: unknown) => {
  const { url, via } = message as { url?: unknown; via?: unknown };
  if (typeof url !== 'string') {
    process.send?.({ error: 'bad request' });
    return;
  }
  const ready = via === 'mcp' ? session(url) : Promise.resolve('');
  ready
    .then(async (id) => {
      const t0 = performance.now();
      const res = via === 'mcp' ? await stopByMcp(url, id) : await fetch(`${url}/stop`, { method: 'POST' });
      const text = await res.text();
      const failed = res.status !== 200 || (via === 'mcp' && !text.includes('"status":"stopped"'));
      process.send?.(
        failed
          ? { error: `stop answered ${res.status}: ${text.slice(0, 200)}` }
          : { ms: performance.now() - t0, sentAtMs: performance.timeOrigin + t0 },
      );
    })
    .catch((e: unknown) => process.send?.({ error: e instanceof Error ? e.message : String(e) }));
});
process.on('disconnect', () => process.exit(0));
process.send?.({ ready: true });
