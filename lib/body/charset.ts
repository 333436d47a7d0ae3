/**
 * The charset a JSON body may declare: JSON exchanged between systems is UTF-8 (RFC 8259, section 8.1), so a
 * Content-Type naming any other charset is refused (415) rather than read as UTF-8.
 */

/** Why a JSON body's Content-Type is refused for its charset parameter; undefined when it declares none or UTF-8. */
export function foreignCharset(contentType: string | null): string | undefined {
  // No parameter at all (`application/json`, as most clients send it): nothing to check.
  if (contentType === null || !contentType.includes(';')) return undefined;
  for (const param of (contentType ?? '').split(';').slice(1)) {
    const eq = param.indexOf('=');
    if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    const value = param
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
    if (/^utf-?8$/i.test(value)) continue;
    const shown = value.slice(0, 40).replace(/[^\x20-\x7e]/g, '?');
    return `a JSON body is read as UTF-8 only (got charset=${shown}); send it as UTF-8 with Content-Type: application/json`;
  }
  return undefined;
}
