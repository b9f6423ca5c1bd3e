// Who is signed in. The session check runs once at start; accounts screens call refresh().
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useRef, useState } from 'react';
import { claimDrafts } from '../../lib/drafts.ts';
import { adoptBrowserTimeZone } from '../daily/api.ts';
import { getSession } from './allauth.ts';
import { getMe } from './api.ts';

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

/** Asks the account API who is signed in (cached 5 s; see allauth.ts). */
export async function fetchSession(): Promise<AuthState> {
  const user = await getSession();
  if (!user) return { status: 'anonymous', user: null };
  return {
    status: 'authenticated',
    user: {
      id: user.id,
      email: user.email ?? user.display ?? '',
      display: user.display,
      has_usable_password: user.has_usable_password,
    },
  };
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
  const status = useRef<AuthState['status']>('loading');
  const refresh = useCallback(async () => {
    const next = await loadSession();
    // Before anything renders for this session: another user's unsent text must not show.
    claimDrafts(next.status === 'authenticated' ? next.user.id : null);
    // Signed up or in here: a new account has no time zone yet, and this browser knows it.
    if (status.current === 'anonymous' && next.status === 'authenticated') {
      getMe().then(adoptBrowserTimeZone, () => {});
    }
    status.current = next.status;
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
