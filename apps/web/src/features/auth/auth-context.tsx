// Who is signed in. The session check runs once at start; accounts screens call refresh().
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react';

export interface SessionUser {
  id: number | string;
  email: string;
  display?: string;
  has_usable_password?: boolean;
}

export type AuthState =
  | { status: 'loading'; user: null }
  | { status: 'authenticated'; user: SessionUser }
  | { status: 'anonymous'; user: null };

export interface AuthContextValue {
  state: AuthState;
  refresh(): Promise<AuthState>;
}

export const SESSION_URL = '/_allauth/browser/v1/auth/session';

export async function fetchSession(): Promise<AuthState> {
  try {
    const response = await fetch(SESSION_URL, { credentials: 'same-origin', headers: { Accept: 'application/json' } });
    if (response.status !== 200) return { status: 'anonymous', user: null };
    const body = (await response.json()) as { data?: { user?: SessionUser } };
    const user = body.data?.user;
    return user ? { status: 'authenticated', user } : { status: 'anonymous', user: null };
  } catch {
    // An unreachable server means nobody can be shown as signed in.
    return { status: 'anonymous', user: null };
  }
}

const AuthContext = createContext<AuthContextValue | null>(null);

export function AuthProvider({
  children,
  loadSession = fetchSession,
}: {
  children: ReactNode;
  loadSession?: () => Promise<AuthState>;
}) {
  const [state, setState] = useState<AuthState>({ status: 'loading', user: null });
  const refresh = useCallback(async () => {
    const next = await loadSession();
    setState(next);
    return next;
  }, [loadSession]);
  useEffect(() => {
    void refresh();
  }, [refresh]);
  const value = useMemo(() => ({ state, refresh }), [state, refresh]);
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}

export function useAuth(): AuthContextValue {
  const ctx = useContext(AuthContext);
  if (!ctx) throw new Error('useAuth must be used inside <AuthProvider>');
  return ctx;
}

/** "Sam@example.com" -> "S" */
export function initialsOf(email: string): string {
  return (email.trim()[0] ?? '?').toUpperCase();
}
