import { setImmediate as nextTurn } from 'node:timers/promises';
import { err, ok, type Result } from '../result.ts';
import { BodyTimeoutError, describeContentType, isClientAbort } from './body.ts';
import { type ApiError, invalid } from '../core/errors.ts';
import { MAX_UPLOAD_BYTES } from '../body/limits.ts';
import { UploadBuffer } from './upload-buffer.ts';
import { boundaryOf, MultipartParser, type PartHead } from './multipart-parser.ts';

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
 * Streams a multipart/form-data body through the parser (lib/http/multipart-parser.ts) with size limits. Unknown, duplicate or
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
  const boundary = boundaryOf(type);
  if (!boundary) return err(invalid(['body'], 'malformed multipart body: Multipart: Boundary not found', 'multipart'));
  // One spare part of each kind, so that an extra part reaches the checks below and is named.
  const most = {
    files: limits.fileParts.length + 1,
    fields: limits.fieldParts.length + 1,
    parts: limits.fileParts.length + limits.fieldParts.length + 2,
    fieldBytes: limits.maxFieldBytes ?? 64 * 1024,
  };
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
    const counts = { parts: 0, files: 0, fields: 0 };
    /** The part being read: a file into its buffer, or a field's bytes (at most most.fieldBytes). */
    let part:
      | { kind: 'file'; name: string; filename: string; mimeType: string; data: UploadBuffer }
      | { kind: 'field'; name: string; charset: string; chunks: Buffer[]; bytes: number; truncated: boolean }
      | undefined;
    const tooLarge = (filename: string) =>
      fail({ kind: 'payload_too_large', detail: `file '${filename}' is larger than ${maxFile} bytes` });
    const beginFile = (name: string, head: PartHead): boolean => {
      if (++counts.files > most.files) {
        fail(invalid(['body'], `too many files (expected ${limits.fileParts.join(', ')})`, 'multipart'));
        return false;
      }
      if (!limits.fileParts.includes(name)) {
        const expected = limits.fileParts.join(', ');
        fail(invalid(['body', name], `unexpected file part '${name}' (expected ${expected})`, 'extra_forbidden'));
        return false;
      }
      if (seen.has(name)) {
        fail(invalid(['body', name], `part '${name}' given more than once`));
        return false;
      }
      seen.add(name);
      // The file is no longer than the body the request announced, nor than the limit: one buffer of that size.
      const data = new UploadBuffer(Number.isSafeInteger(declared) ? declared : 0, maxFile);
      buffers.push(data);
      part = { kind: 'file', name, filename: head.filename ?? '', mimeType: head.mimeType, data };
      return true;
    };
    const beginField = (name: string, head: PartHead): boolean => {
      if (++counts.fields > most.fields) {
        fail(invalid(['body'], 'too many fields', 'multipart'));
        return false;
      }
      part = { kind: 'field', name, charset: head.charset, chunks: [], bytes: 0, truncated: false };
      return true;
    };
    const endField = (field: { name: string; charset: string; chunks: Buffer[]; truncated: boolean }) => {
      const { name } = field;
      if (!limits.fieldParts.includes(name)) {
        const expected = [...limits.fieldParts, ...limits.fileParts].join(', ');
        return fail(invalid(['body', name], `unexpected field '${name}' (expected ${expected})`, 'extra_forbidden'));
      }
      if (field.truncated) return fail(invalid(['body', name], `field '${name}' is too long`, 'too_long'));
      if (name in fields) return fail(invalid(['body', name], `field '${name}' given more than once`));
      fields[name] = textOf(Buffer.concat(field.chunks), field.charset);
    };
    const parser = new MultipartParser(boundary, {
      begin: (head) => {
        part = undefined;
        if (failure) return false;
        if (++counts.parts >= most.parts) {
          fail(invalid(['body'], 'too many parts', 'multipart'));
          return false;
        }
        if (!head) return false;
        // A part without a name is named as busboy named it.
        const name = head.name ?? 'undefined';
        return head.isFile ? beginFile(name, head) : beginField(name, head);
      },
      data: (bytes) => {
        if (failure || !part) return;
        if (part.kind === 'file') {
          // A file reaching the limit is refused, as busboy's 'limit' did.
          if (part.data.length + bytes.byteLength >= maxFile || !part.data.append(bytes))
            return tooLarge(part.filename);
          return;
        }
        const room = most.fieldBytes - part.bytes;
        if (bytes.byteLength >= room) part.truncated = true;
        part.chunks.push(Buffer.from(bytes.subarray(0, Math.min(room, bytes.byteLength))));
        part.bytes += Math.min(room, bytes.byteLength);
      },
      end: () => {
        const ended = part;
        part = undefined;
        if (failure || !ended) return;
        if (ended.kind === 'file') {
          const { name, filename, mimeType, data } = ended;
          files[name] = { filename, mimeType, data: data.bytes() };
        } else endField(ended);
      },
    });
    /** Reads a chunk; false once the body is refused. */
    const read = (chunk: Uint8Array): boolean => {
      try {
        parser.push(chunk);
      } catch (e) {
        fail(invalid(['body'], `malformed multipart body: ${(e as Error).message}`, 'multipart'));
      }
      return !failure;
    };
    const finish = () => {
      try {
        parser.end();
      } catch (e) {
        // Cut short inside a file: the error names its part, as the file's stream did with busboy.
        const where = part?.kind === 'file' ? ['body', part.name] : ['body'];
        return fail(invalid(where, `malformed multipart body: ${(e as Error).message}`, 'multipart'));
      }
      if (failure) return;
      // The files' buffers are the caller's now.
      buffers.length = 0;
      resolve(ok({ fields, files }));
    };
    const pump = async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (failure) {
            await reader.cancel();
            return;
          }
          if (done) return finish();
          if (!read(value)) {
            await reader.cancel();
            return;
          }
          // One chunk of each upload per turn of the event loop: 16 uploads arriving at full speed do not parse
          // megabytes in one turn, a stop read meanwhile waits for a few chunks at most, and what a body holds
          // unread is the stream's buffer (reading pauses beyond it).
          await nextTurn();
        }
      } catch (e) {
        // The client went away: the request ends as its own case (lib/http/routes.ts's createApp), not as a bad body.
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

/** A field's bytes as text in the charset its part names (UTF-8 when none, or one not known). */
function textOf(bytes: Uint8Array, charset: string): string {
  try {
    return new TextDecoder(charset).decode(bytes);
  } catch {
    return new TextDecoder().decode(bytes);
  }
}
