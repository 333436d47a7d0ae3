/** One structured log line (JSON) on stdout. Never pass secrets. */
export function logLine(fields: Record<string, string | number | boolean | undefined>): void {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), ...fields })}\n`);
}
