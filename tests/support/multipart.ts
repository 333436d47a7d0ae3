/**
 * Multipart bodies for the upload endpoints, built with Node's global FormData and Blob (fetch
 * sets the boundary).
 */

/** Text or raw bytes of an uploaded file. */
export type FileContent = string | Uint8Array<ArrayBuffer>;

/** A form with one file part (default `file`, as POST /trajectory/send_csv takes it). */
export function fileForm(content: FileContent, filename = 'points.csv', part = 'file'): FormData {
  const form = new FormData();
  form.append(part, new Blob([content]), filename);
  return form;
}

/** POST /trajectory/send_csv's form: the CSV as the part `file`, plus any extra parts. */
export function csvForm(
  content: FileContent,
  options: {
    filename?: string;
    part?: string;
    extraFiles?: Record<string, FileContent>;
    extraFields?: Record<string, string>;
  } = {},
): FormData {
  const form = fileForm(content, options.filename ?? 'points.csv', options.part ?? 'file');
  for (const [name, data] of Object.entries(options.extraFiles ?? {}))
    form.append(name, new Blob([data]), `${name}.csv`);
  for (const [name, value] of Object.entries(options.extraFields ?? {})) form.append(name, value);
  return form;
}

/**
 * POST /sequences/start's form: the configuration as the file part `config` (an object is
 * serialized as JSON, a string or bytes are sent as they are) and the text fields.
 */
export function sequenceForm(
  config: unknown,
  fields: Record<string, string> = {},
  filename = 'sequence.json',
): FormData {
  const form = new FormData();
  const content: FileContent =
    typeof config === 'string' || config instanceof Uint8Array ? (config as FileContent) : JSON.stringify(config);
  form.append('config', new Blob([content]), filename);
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  return form;
}
