/** Reading an audit trail as tests do (lib/audit/trail.ts). */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { ROTATED_KEPT } from '../../lib/audit/trail.ts';

/**
 * Every line of a trail's file at `file` and of its rotated ones, oldest first, each parsed (a line that does not parse
 * fails); a missing file is empty. With `wholeLines`, each file must also end with a whole line.
 */
export async function trailLines<T>(file: string, wholeLines = false): Promise<T[]> {
  const lines: T[] = [];
  for (let k = ROTATED_KEPT; k >= 0; k--) {
    const name = k === 0 ? file : `${file}.${k}`;
    const text = await readFile(name, 'utf8').catch(() => '');
    if (wholeLines) assert.ok(text === '' || text.endsWith('\n'), `${name} ends with a whole line`);
    for (const line of text.split('\n')) if (line !== '') lines.push(JSON.parse(line) as T);
  }
  return lines;
}
