const hasControl = (s: string) => [...s].some((c) => c.charCodeAt(0) < 0x20);

/**
 * `value` as a path on this site, or `fallback`. The URL is resolved first, so `/..//evil.example`
 * (which normalises to `//evil.example`, a link to another host) and `/\evil.example` are refused.
 */
export function localPath(value: unknown, fallback = '/'): string {
  if (typeof value !== 'string' || !value.startsWith('/') || value.includes('\\') || hasControl(value)) return fallback;
  const base = 'http://local.invalid';
  let url: URL;
  try {
    url = new URL(value, base);
  } catch {
    return fallback;
  }
  const path = url.pathname + url.search + url.hash;
  if (url.origin !== base || path.startsWith('//')) return fallback;
  return path;
}
