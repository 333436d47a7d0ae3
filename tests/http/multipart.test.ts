/**
 * The multipart reader of uploads (lib/http/multipart.ts with lib/http/multipart-parser.ts): any form, cut into chunks
 * anywhere, is read back exactly (its boundary searched natively rather than by busboy's JavaScript search, issue 37),
 * and a body cut short or malformed is a 422 naming where.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseMultipart } from '../../lib/http/multipart.ts';

const enc = new TextEncoder();

/** A request whose body arrives in the chunks given. */
function request(chunks: Uint8Array[], boundary: string, length?: number): Request {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  const headers: Record<string, string> = { 'content-type': `multipart/form-data; boundary=${boundary}` };
  if (length !== undefined) headers['content-length'] = String(length);
  return new Request('http://localhost/trajectory/send_csv', {
    method: 'POST',
    body,
    headers,
    duplex: 'half',
  } as RequestInit);
}

/** `bytes` cut at the (sorted, deduplicated) positions given. */
function cut(bytes: Uint8Array, at: number[]): Uint8Array[] {
  const points = [...new Set(at.map((p) => p % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let from = 0;
  for (const p of [...points, bytes.length]) {
    if (p > from) chunks.push(bytes.slice(from, p));
    from = Math.max(from, p);
  }
  return chunks;
}

type Part = { name: string; file?: string; content: Uint8Array };

/** A multipart body with `parts`, as a browser or curl sends it (a preamble and an epilogue when asked). */
function body(boundary: string, parts: Part[], extras = { preamble: '', epilogue: '' }): Uint8Array {
  const pieces: Uint8Array[] = [enc.encode(extras.preamble ? `${extras.preamble}\r\n` : '')];
  for (const part of parts) {
    const disposition = part.file
      ? `form-data; name="${part.name}"; filename="${part.file}"\r\nContent-Type: text/csv`
      : `form-data; name="${part.name}"`;
    pieces.push(
      enc.encode(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n\r\n`),
      part.content,
      enc.encode('\r\n'),
    );
  }
  pieces.push(enc.encode(`--${boundary}--\r\n${extras.epilogue}`));
  return Buffer.concat(pieces);
}

const BOUNDARY_CHARS = "ABCXYZabcxyz0189'()+_,-./:=?";

describe('multipart bodies', () => {
  it('any form cut anywhere is read back exactly: files byte for byte, fields as text', async () => {
    const boundary = fc.string({ unit: fc.constantFrom(...BOUNDARY_CHARS), minLength: 1, maxLength: 70 });
    await fc.assert(
      fc.asyncProperty(
        boundary,
        // File bytes mixing CR, LF, dashes and pieces of the boundary with any byte.
        fc.array(
          fc.oneof(fc.constantFrom('\r', '\n', '\r\n', '\r\n-', '\r\n--', '-', 'x'), fc.uint8Array({ maxLength: 40 })),
          {
            maxLength: 40,
          },
        ),
        fc.string({ maxLength: 30, unit: fc.constantFrom('a', 'b', '1', ' ', 'é', '\r', '\n') }),
        fc.array(fc.nat(4000), { maxLength: 12 }),
        fc.boolean(),
        async (b, bits, note, at, extras) => {
          const tail = b.slice(0, Math.max(0, b.length - 1));
          const file = Buffer.concat(
            bits.map((x) => (typeof x === 'string' ? enc.encode(x === '\r\n--' ? `\r\n--${tail}` : x) : x)),
          );
          const delimiter = Buffer.from(`\r\n--${b}`);
          fc.pre(!Buffer.concat([Buffer.from('\r\n'), file, Buffer.from('\r\n')]).includes(delimiter));
          fc.pre(!Buffer.from(`\r\n${note}\r\n`).includes(delimiter));
          const bytes = body(
            b,
            [
              { name: 'file', file: 'points.csv', content: file },
              { name: 'note', content: enc.encode(note) },
            ],
            extras ? { preamble: 'a preamble', epilogue: 'an epilogue' } : { preamble: '', epilogue: '' },
          );
          const parsed = await parseMultipart(request(cut(bytes, at), b, bytes.length), {
            fileParts: ['file'],
            fieldParts: ['note'],
          });
          assert.ok(parsed.ok, JSON.stringify(parsed.ok ? '' : parsed.error));
          assert.deepEqual(Buffer.from(parsed.value.files.file?.data ?? []), Buffer.from(file));
          assert.equal(parsed.value.files.file?.filename, 'points.csv');
          assert.equal(parsed.value.files.file?.mimeType, 'text/csv');
          assert.equal(parsed.value.fields.note, note);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a quoted boundary, a filename with a path and a filename* are read as busboy read them', async () => {
    const bytes = enc.encode(
      '--a b\r\nContent-Disposition: form-data; name="file"; filename="C:\\\\dir\\\\p.csv"\r\n\r\n1,2\r\n' +
        "--a b\r\ncontent-disposition: form-data; name=other; filename*=utf-8''%C3%A9.csv\r\n\r\nx\r\n--a b--",
    );
    const parsed = await parseMultipart(request([bytes], '"a b"'), { fileParts: ['file', 'other'], fieldParts: [] });
    assert.ok(parsed.ok, JSON.stringify(parsed.ok ? '' : parsed.error));
    assert.equal(parsed.value.files.file?.filename, 'p.csv');
    assert.equal(Buffer.from(parsed.value.files.file?.data ?? []).toString(), '1,2');
    assert.equal(parsed.value.files.other?.filename, 'é.csv');
  });

  const refused: [string, string, (string | number)[], RegExp][] = [
    [
      'a body cut short inside the file',
      '--zz\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\n1,2',
      ['body', 'file'],
      /^malformed multipart body: Unexpected end of form$/,
    ],
    [
      'a body without its closing boundary',
      '--zz\r\nContent-Disposition: form-data; name="note"\r\n\r\nx\r\n--zz\r\n',
      ['body'],
      /^malformed multipart body: /,
    ],
    ['no boundary at all', '{"points": []}', ['body'], /^malformed multipart body: Unexpected end of form$/],
    [
      'a header line without a colon',
      '--zz\r\nContent-Disposition form-data\r\n\r\nx\r\n--zz--',
      ['body'],
      /^malformed multipart body: Malformed part header$/,
    ],
    [
      'the file part twice',
      '--zz\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\n1\r\n--zz\r\nContent-Disposition: form-data; name="file"; filename="b"\r\n\r\n2\r\n--zz--',
      ['body', 'file'],
      /more than once/,
    ],
    [
      'an unexpected field',
      '--zz\r\nContent-Disposition: form-data; name="other"\r\n\r\nx\r\n--zz--',
      ['body', 'other'],
      /^unexpected field 'other'/,
    ],
  ];
  for (const [what, text, loc, msg] of refused)
    it(`refuses ${what} with a 422 at ${loc.join('.')}`, async () => {
      const bytes = enc.encode(text);
      for (const chunks of [[bytes], cut(bytes, [1, 7, 30, 31, 60])]) {
        const parsed = await parseMultipart(request(chunks, 'zz'), { fileParts: ['file'], fieldParts: ['note'] });
        assert.ok(!parsed.ok);
        assert.equal(parsed.error.kind, 'validation');
        const issue = parsed.error.kind === 'validation' ? parsed.error.issues[0] : undefined;
        assert.deepEqual(issue?.loc, loc);
        assert.match(issue?.msg ?? '', msg);
      }
    });

  it('a file over the limit is a 413 once the limit is reached', async () => {
    const bytes = body('zz', [{ name: 'file', file: 'a.csv', content: new Uint8Array(2000).fill(49) }]);
    const parsed = await parseMultipart(request(cut(bytes, [100, 1000]), 'zz'), {
      fileParts: ['file'],
      fieldParts: [],
      maxFileBytes: 1500,
    });
    assert.ok(!parsed.ok);
    assert.equal(parsed.error.kind, 'payload_too_large');
  });
});
