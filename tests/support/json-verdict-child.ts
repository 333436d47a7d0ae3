/**
 * A process that asks lib/body/parse-json.ts about a large text JSON.parse refuses (its message found on the verdict
 * thread), prints the message and returns: tests/http/json-verdict.test.ts sees it exit by itself (the thread, idle,
 * does not keep it alive).
 */
import { parseJson } from '../../lib/body/parse-json.ts';
import { NATIVE_CHARS } from '../../lib/body/sliced-json.ts';

const text = `[${'"pad",'.repeat(NATIVE_CHARS / 6)}tru]`;
try {
  await parseJson(text);
  process.stdout.write('taken\n');
} catch (e) {
  process.stdout.write(`${(e as Error).message}\n`);
}
