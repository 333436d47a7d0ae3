import { once } from 'node:events';
import { setImmediate as nextTurn } from 'node:timers/promises';
import busboy from 'busboy';
import { err, ok, type Result } from '../result.ts';
import { BodyTimeoutError, describeContentType, isClientAbort } from './body.ts';
import { type ApiError, invalid } from '../core/errors.ts';
import { MAX_UPLOAD_BYTES } from './limits.ts';
import { UploadBuffer } from './upload-buffer.ts';

/** An uploaded file part, buffered within the size limit. */
export interface UploadedFile {
  readonly filename: string;
  readonly mimeType: string;
  /** The file's bytes: a view from offset 0 of an ArrayBuffer of its own (lib/http/upload-buffer.ts), transferable. */
  readonly data: Uint8Array;
}

/** A parsed multipart/form-data body. */
export interface MultipartBody {
  readonly fields: Readonly<Record<string, string>>;
  readonly files: Readonly<Record<string, UploadedFile>>;
}

export interface MultipartLimits {
  /** Names of the file parts allowed. */
  readonly fileParts: readonly string[];
  /** Names of the text fields allowed. */
  readonly fieldParts: readonly string[];
  /** Largest file (bytes); default 10 MiB. */
  readonly maxFileBytes?: number;
  /** Largest text field (bytes); default 64 KiB. */
  readonly maxFieldBytes?: number;
}

/**
 * Streams a multipart/form-data body through busboy with size limits. Unknown, duplicate or
 * oversized parts are refused (422, or 413 for size), as is a malformed body; nothing larger than
 * the limits is buffered.
 */
export async function parseMultipart(
  request: Request,
  limits: MultipartLimits,
): Promise<Result<MultipartBody, ApiError>> {
  const type = request.headers.get('content-type') ?? '';
  if (!/^multipart\/form-data\s*;/i.test(type)) {
    return err({
      kind: 'unsupported_media_type',
      detail: `expected a multipart/form-data body (got ${describeContentType(type)}); with curl use -F`,
    });
  }
  const maxFile = limits.maxFileBytes ?? MAX_UPLOAD_BYTES;
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (declared > maxFile + 256 * 1024)
    return err({ kind: 'payload_too_large', detail: `upload is larger than ${maxFile} bytes` });
  if (!request.body) return err(invalid(['body'], 'the multipart body is empty', 'missing'));
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { 'content-type': type },
      // One spare part of each kind, so an extra part reaches the handlers below and is named.
      limits: {
        fileSize: maxFile,
        files: limits.fileParts.length + 1,
        fields: limits.fieldParts.length + 1,
        fieldSize: limits.maxFieldBytes ?? 64 * 1024,
        parts: limits.fileParts.length + limits.fieldParts.length + 2,
      },
    });
  } catch (e) {
    return err(invalid(['body'], `malformed multipart body: ${(e as Error).message}`, 'multipart'));
  }
  const reader = request.body.getReader();
  return new Promise((resolve, reject) => {
    const fields: Record<string, string> = {};
    const files: Record<string, UploadedFile> = {};
    const seen = new Set<string>();
    /** The files' buffers: given back for the next uploads when the body is refused (lib/body/upload-pool.ts). */
    const buffers: UploadBuffer[] = [];
    let failure: ApiError | undefined;
    const release = () => {
      for (const buffer of buffers) buffer.release();
      buffers.length = 0;
    };
    const fail = (error: ApiError) => {
      failure ??= error;
      release();
      resolve(err(failure));
    };
    parser.on('file', (name, stream, info) => {
      // A truncated body errors the part's stream too; without a listener that would crash the process.
      stream.on('error', (e: Error) =>
        fail(invalid(['body', name], `malformed multipart body: ${e.message}`, 'multipart')),
      );
      if (!limits.fileParts.includes(name)) {
        stream.resume();
        return fail(
          invalid(
            ['body', name],
            `unexpected file part '${name}' (expected ${limits.fileParts.join(', ')})`,
            'extra_forbidden',
          ),
        );
      }
      if (seen.has(name)) {
        stream.resume();
        return fail(invalid(['body', name], `part '${name}' given more than once`));
      }
      seen.add(name);
      // The file is no longer than the body the request announced, nor than the limit: one buffer of that size.
      const data = new UploadBuffer(Number.isSafeInteger(declared) ? declared : 0, maxFile);
      buffers.push(data);
      stream.on('data', (chunk: Buffer) => {
        if (!failure && !data.append(chunk))
          fail({ kind: 'payload_too_large', detail: `file '${info.filename}' is larger than ${maxFile} bytes` });
      });
      stream.on('limit', () =>
        fail({ kind: 'payload_too_large', detail: `file '${info.filename}' is larger than ${maxFile} bytes` }),
      );
      stream.on('close', () => {
        if (!failure) files[name] = { filename: info.filename ?? '', mimeType: info.mimeType, data: data.bytes() };
      });
    });
    parser.on('field', (name, value, info) => {
      if (!limits.fieldParts.includes(name))
        return fail(
          invalid(
            ['body', name],
            `unexpected field '${name}' (expected ${[...limits.fieldParts, ...limits.fileParts].join(', ')})`,
            'extra_forbidden',
          ),
        );
      if (info.valueTruncated) return fail(invalid(['body', name], `field '${name}' is too long`, 'too_long'));
      if (name in fields) return fail(invalid(['body', name], `field '${name}' given more than once`));
      fields[name] = value;
    });
    parser.on('partsLimit', () => fail(invalid(['body'], 'too many parts', 'multipart')));
    parser.on('filesLimit', () =>
      fail(invalid(['body'], `too many files (expected ${limits.fileParts.join(', ')})`, 'multipart')),
    );
    parser.on('fieldsLimit', () => fail(invalid(['body'], 'too many fields', 'multipart')));
    parser.on('error', (e: Error) => fail(invalid(['body'], `malformed multipart body: ${e.message}`, 'multipart')));
    parser.on('close', () => {
      if (failure) return;
      // The files' buffers are the caller's now: a failure reported after this (the stream erring late) keeps them.
      buffers.length = 0;
      resolve(ok({ fields, files }));
    });
    // Feed busboy from the web stream (the server's ponyfill is not a Node stream), with backpressure.
    const pump = async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (failure) {
            await reader.cancel();
            return;
          }
          if (done) {
            parser.end();
            return;
          }
          if (!parser.write(value)) await once(parser, 'drain');
          // One chunk of each upload per turn of the event loop: 16 uploads arriving at full speed do not parse
          // megabytes in one turn, a stop read meanwhile waits for a few chunks at most, and what a body holds
          // unread is the stream's buffer (reading pauses beyond it).
          await nextTurn();
        }
      } catch (e) {
        // The client went away: the request ends as its own case (lib/http/app.ts), not as a bad body.
        if (e instanceof BodyTimeoutError || isClientAbort(e, request)) {
          failure ??= invalid(['body'], 'the client closed the request', 'aborted');
          release();
          reject(e);
          return;
        }
        fail(invalid(['body'], `the upload was interrupted: ${(e as Error).message}`, 'multipart'));
      }
    };
    void pump();
  });
}
