/**
 * JSON.parse of a request body (a REST JSON body, a JSON file of a form) without holding the event loop: a text of
 * {@link NATIVE_CHARS} or more is parsed a slice per turn (lib/body/sliced-json.ts), so that a POST /stop sent
 * meanwhile waits for one slice, not the whole parse. Values and refusals are JSON.parse's, messages included: a text
 * the slices refuse is refused with the message JSON.parse gives it, found on another thread
 * (lib/body/json-verdict.ts).
 */
import { nativeVerdict } from './json-verdict.ts';
import { NATIVE_CHARS, parseJsonSliced, type SlicedOptions } from './sliced-json.ts';

/** JSON.parse(text)'s value, or its SyntaxError (the same message); a large text parsed a slice per turn. */
export async function parseJson(text: string, options: SlicedOptions = {}): Promise<unknown> {
  if (text.length < (options.nativeChars ?? NATIVE_CHARS)) return JSON.parse(text);
  try {
    return await parseJsonSliced(text, options);
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
    const message = await nativeVerdict(text).catch(() => undefined);
    // The thread could not answer, or JSON.parse takes what the slices do not (large containers nested deeper than
    // sliced-json's MAX_DEPTH): JSON.parse says it here, as before.
    if (message === undefined || message === null) return JSON.parse(text);
    throw new SyntaxError(message);
  }
}
