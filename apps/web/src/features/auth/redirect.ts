// Where to go after signing in. Only same-site paths: an attacker-made ?next= must not lead away.

/** The path itself when it is a plain same-site path ("/x", not "//host", "/\host" or "https:"). */
export function safePath(value: unknown): string | null {
  if (typeof value !== 'string' || !value.startsWith('/')) return null;
  // Browsers drop tabs and newlines in URLs and read "\" as "/", which could turn "/\t/x" into "//x".
  if (value.startsWith('//') || /[\\\s]/.test(value)) return null;
  return value;
}

interface FromState {
  from?: { pathname?: unknown; search?: unknown; hash?: unknown };
}

/** `?next=`, else the location the route guard remembered in `state.from`, else "/". */
export function rememberedPath(search: string, state: unknown): string {
  const next = safePath(new URLSearchParams(search).get('next'));
  if (next) return next;
  const from = (state as FromState | null)?.from;
  const pathname = safePath(from?.pathname);
  if (pathname) {
    const query = typeof from?.search === 'string' ? from.search : '';
    const hash = typeof from?.hash === 'string' ? from.hash : '';
    return `${pathname}${query}${hash}`;
  }
  return '/';
}

/**
 * Where a sign-in lands: the remembered path; but a plain landing ("/") of someone who has not had
 * the onboarding interview yet goes to it (once: finishing or skipping it marks the account).
 */
export async function landingAfterSignIn(path: string, onboarded: () => Promise<boolean>): Promise<string> {
  if (path !== '/') return path;
  try {
    return (await onboarded()) ? '/' : '/onboarding';
  } catch {
    // Unknown: Home, as before.
    return '/';
  }
}
