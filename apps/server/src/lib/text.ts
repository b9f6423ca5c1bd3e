// Text as PostgreSQL can store it.

const NUL = '\u0000';

/** `value` (parsed JSON or form fields) with NUL characters removed from every string in it. */
export function withoutNul<T>(value: T): T {
  if (typeof value === 'string') return (value.includes(NUL) ? value.replaceAll(NUL, '') : value) as T;
  if (Array.isArray(value)) return value.map(withoutNul) as T;
  // A Buffer or other raw body is left as it is.
  if (value && typeof value === 'object' && !ArrayBuffer.isView(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[withoutNul(key)] = withoutNul(item);
    return out as T;
  }
  return value;
}

/**
 * `text` as it may stand inside `<tag>…</tag>` in a prompt: every opening or closing of that tag
 * (spaced, in any case, or written as an HTML entity) gets a look-alike bracket, so quoted material
 * (web pages, calendar titles, earlier model output) can neither end its quote nor forge another.
 */
export function quotedIn(tag: string, text: string): string {
  const name = tag.replace(/[^a-z_-]/gi, '');
  return text.replace(new RegExp(`(?:<|&lt;?|&#0*60;?|&#x0*3c;?)(\\s*\\/?\\s*${name}\\b)`, 'gi'), '‹$1');
}
