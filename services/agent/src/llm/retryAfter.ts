/** `Retry-After` as milliseconds from `now`: delta-seconds or an HTTP date (RFC 9110 §10.2.3); undefined when absent or unreadable. */
export function parseRetryAfter(header: string | null | undefined, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const text = header.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
  // An HTTP date names its day and month; Date.parse alone would read "-3" as a year.
  const at = /^[A-Za-z]{3}, /.test(text) ? Date.parse(text) : NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
