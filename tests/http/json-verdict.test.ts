/**
 * lib/body/json-verdict.ts through parseJson: many large texts JSON.parse refuses, asked about at once, each get
 * JSON.parse's own message; a verdict thread terminated with a question in flight still leaves every answer exact
 * (JSON.parse asked on the event loop instead) and the next question gets a new thread; a process that used the thread
 * exits by itself. The thread is seen through node's diagnostics channel for worker threads, not through the module.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { subscribe } from 'node:diagnostics_channel';
import path from 'node:path';
import { describe, it } from 'node:test';
import { MessageChannel, type Worker } from 'node:worker_threads';
import { parseJson } from '../../lib/body/parse-json.ts';
import { NATIVE_CHARS } from '../../lib/body/sliced-json.ts';
import { nodeEntry } from '../support/node-entry.ts';
import { nativeMessage } from '../support/json-texts.ts';

/** The threads started in this process, in order. */
const started: Worker[] = [];
/** Called with each thread as it starts. */
let onStart: (worker: Worker) => void = () => {};
subscribe('worker_threads', (message) => {
  const worker = (message as { worker: Worker }).worker;
  started.push(worker);
  onStart(worker);
});

/** Large texts JSON.parse refuses, each in its own way and at its own place. */
function badTexts(count: number): string[] {
  const faults = ['tru', '01', '"\u0001"', '[1,]', '{"a" 1}', "'x'", 'NaN', '"\\x"', '1 2', '{"a":1,}', '-'];
  return Array.from({ length: count }, (_, i) => {
    const items = Array.from({ length: 1200 + i }, (_, k) => `{"k${k}":[${k},"${k}"]}`);
    items.splice((i * 97) % items.length, 0, faults[i % faults.length] as string);
    return `[${items.join(',')}]`;
  });
}

/** parseJson's refusal's message for `text`. */
async function refusal(text: string): Promise<string> {
  try {
    await parseJson(text);
  } catch (e) {
    assert.ok(e instanceof SyntaxError, String(e));
    return e.message;
  }
  throw new Error(`parseJson took ${text.slice(0, 40)}`);
}

describe('the JSON verdict thread', () => {
  it("gives each of many large texts asked about at once JSON.parse's own message", async () => {
    const texts = badTexts(40);
    assert.ok(texts.every((t) => t.length >= NATIVE_CHARS));
    const messages = await Promise.all(texts.map(refusal));
    assert.deepEqual(messages, texts.map(nativeMessage));
    assert.equal(new Set(messages).size > 5, true, 'the messages differ: each is its own text');
    assert.equal(started.length, 1, 'one thread answers them all');
  });

  it('answers exactly when the thread is terminated with questions in flight, and starts a new one after', async () => {
    const texts = badTexts(12);
    const first = started[0] as Worker;
    const exited = new Promise((resolve) => first.once('exit', resolve));
    // Terminated once every question below is posted to it (they are asked together, after the slices refuse).
    const post = first.postMessage.bind(first);
    let posted = 0;
    first.postMessage = (message: unknown) => {
      post(message);
      if (++posted === texts.length) void first.terminate();
    };
    const asked = Promise.all(texts.map(refusal));
    // The thread is let go (unreferenced) once it has answered every question asked: when it answers the last ones
    // before the termination takes effect, nothing else would keep this process's event loop up until its exit.
    const { port1: keepAlive } = new MessageChannel();
    keepAlive.on('message', () => {});
    await exited.finally(() => keepAlive.close());
    assert.equal(posted, texts.length, 'every question was in flight when the thread was terminated');
    assert.deepEqual(await asked, texts.map(nativeMessage));
    let next: Worker | undefined;
    onStart = (worker) => {
      next = worker;
    };
    assert.deepEqual(await Promise.all(texts.slice(0, 3).map(refusal)), texts.slice(0, 3).map(nativeMessage));
    assert.ok(next !== undefined && next !== first, 'a new thread answers the next questions');
  });

  it('does not keep a process that used it alive', { timeout: 120_000 }, async () => {
    const entry = nodeEntry(path.join(import.meta.dirname, '../support/json-verdict-child.ts'));
    const child = spawn(process.execPath, [...entry.execArgv, entry.file], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const code = await new Promise((resolve) => child.once('exit', resolve));
    assert.equal(code, 0);
    const text = `[${'"pad",'.repeat(NATIVE_CHARS / 6)}tru]`;
    assert.equal(out, `${nativeMessage(text)}\n`, 'the child asked the thread, printed its answer and exited');
  });
});
