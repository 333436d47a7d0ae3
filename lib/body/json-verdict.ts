/**
 * JSON.parse's own verdict on a large text, found on a thread of its own: the message of the SyntaxError it throws
 * (V8's, word for word), so that a refusal of a body parsed in slices (lib/body/sliced-json.ts, whose messages are its
 * own) reads as it did when the body was parsed at once, without JSON.parse holding the event loop (~80 ms a MiB of
 * objects with distinct keys) for a text that is refused anyway. One thread, started on the first text asked about,
 * kept while texts are asked about and let go (unreferenced) otherwise; a thread that fails is replaced by the next ask.
 */
import { Worker } from 'node:worker_threads';

/** The thread's code (plain JavaScript: it runs the same under tsx and compiled). */
const SOURCE = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', ({ id, text }) => {
  let message = null;
  try {
    JSON.parse(text);
  } catch (e) {
    message = String(e && e.message);
  }
  parentPort.postMessage({ id, message });
});
`;

/** What JSON.parse said: its SyntaxError's message, or null when it parsed the text. */
type Verdict = string | null;

let worker: Worker | undefined;
let nextId = 1;
const waiting = new Map<number, { resolve: (verdict: Verdict) => void; reject: (error: Error) => void }>();

function thread(): Worker {
  if (worker) return worker;
  const started = new Worker(SOURCE, { eval: true, name: 'armgate-json-verdict' });
  started.on('message', ({ id, message }: { id: number; message: Verdict }) => {
    waiting.get(id)?.resolve(message);
    waiting.delete(id);
    if (waiting.size === 0) started.unref();
  });
  const fail = (error: Error) => {
    if (worker === started) worker = undefined;
    for (const job of waiting.values()) job.reject(error);
    waiting.clear();
  };
  started.on('error', fail);
  started.on('exit', (code) => fail(new Error(`the JSON verdict thread exited (code ${code})`)));
  worker = started;
  return started;
}

/**
 * JSON.parse's verdict on `text` from another thread: the message of its SyntaxError, or null when it parses. Rejects
 * when the thread cannot answer (the caller then asks JSON.parse itself).
 */
export function nativeVerdict(text: string): Promise<Verdict> {
  return new Promise((resolve, reject) => {
    const id = nextId++;
    waiting.set(id, { resolve, reject });
    const target = thread();
    target.ref();
    target.postMessage({ id, text });
  });
}
