// The CSRF token sent as X-CSRFToken on every non-GET call: the csrftoken cookie when the server
// has set one, else the token the account API's GET /config hands out (cached 30 s).
import { z } from 'zod';

export const CONFIG_URL = '/_allauth/browser/v1/config';
export const CSRF_CACHE_MS = 30_000;

const ZConfigMeta = z.object({ meta: z.object({ csrf_token: z.string().min(1) }) });

let cached: { token: string; at: number } | null = null;

export function readCookie(name: string): string | undefined {
  const match = document.cookie.split('; ').find((part) => part.startsWith(`${name}=`));
  return match ? decodeURIComponent(match.slice(name.length + 1)) : undefined;
}

async function fetchConfigToken(): Promise<string | undefined> {
  try {
    const response = await fetch(CONFIG_URL, {
      credentials: 'same-origin',
      headers: { Accept: 'application/json', 'X-Requested-With': 'XMLHttpRequest' },
    });
    const parsed = ZConfigMeta.safeParse(await response.json());
    if (!parsed.success) return undefined;
    cached = { token: parsed.data.meta.csrf_token, at: Date.now() };
    return cached.token;
  } catch {
    return undefined;
  }
}

/** `fresh` skips the cookie and the cache: used to retry a request the server refused for CSRF. */
export async function getCsrfToken({ fresh = false }: { fresh?: boolean } = {}): Promise<string | undefined> {
  if (!fresh) {
    const cookie = readCookie('csrftoken');
    if (cookie) return cookie;
    if (cached && Date.now() - cached.at < CSRF_CACHE_MS) return cached.token;
  }
  return fetchConfigToken();
}

export function clearCsrfCache() {
  cached = null;
}
