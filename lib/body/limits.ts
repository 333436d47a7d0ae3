/** Largest JSON request body accepted (1 MiB); larger gives 413. */
export const MAX_JSON_BODY_BYTES = 1024 * 1024;
/** Largest multipart upload accepted (10 MiB); larger gives 413. */
export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;
