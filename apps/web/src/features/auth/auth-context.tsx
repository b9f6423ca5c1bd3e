// Who is signed in. The session check runs once at start; accounts screens call refresh().
import type { TSessionEndedReason } from '@daybook/contracts';
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useRef, useState } from 'react';
import { claimDrafts } from '../../lib/drafts.ts';
import { getSessionInfo } from './allauth.ts';
import { getMe } from './api.ts';
import { adoptBrowserTimeZone } from './time-zone.ts';

export interface SessionUser {
  id: number | string;
  email: string;
  display?: string;
  has_usable_password?: boolean;
}

export type AuthState =
  | { status: 'loading'; user: null }
  | { status: 'authenticated'; user: SessionUser }
  /** `ended`: the server ended this browser's session, and said why (the sign-in page tells the person). */
  | { status: 'anonymous'; user: null; ended?: TSessionEndedReason };

export interface AuthContextValue {
  state: AuthState;
  refresh(): Promise<AuthState>;
}

/** Asks the account API who is signed in (cached 5 s; see allauth.ts). */
export async function fetchSession(): Promise<AuthState> {
  const { user, ended } = await getSessionInfo();
  if (!user) return ended ? { status: 'anonymous', user: null, ended } : { status: 'anonymous', user: null };
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

/** Whether two states name the same user the same way (a check that changed nothing re-renders nothing). */
function sameState(a: AuthState, b: AuthState): boolean {
  if (a.status !== b.status) return false;
  if (a.status === 'anonymous' && b.status === 'anonymous') return a.ended === b.ended;
  if (a.status !== 'authenticated' || b.status !== 'authenticated') return true;
  const [x, y] = [a.user, b.user];
  return (
    x.id === y.id && x.email === y.email && x.display === y.display && x.has_usable_password === y.has_usable_password
  );
}

// Before anything renders for a session: another user's unsent text must not show.
const claimFor = (state: AuthState) => claimDrafts(state.status === 'authenticated' ? state.user.id : null);

export function AuthProvider({
  children,
  loadSession = fetchSession,
  initial,
}: {
  children: ReactNode;
  loadSession?: () => Promise<AuthState>;
  /** Known before the first render (the page carried the answer, see main.tsx): no "Loading" frame. */
  initial?: AuthState;
}) {
  const [state, setState] = useState<AuthState>(() => {
    if (!initial) return { status: 'loading', user: null };
    claimFor(initial);
    return initial;
  });
  const status = useRef<AuthState['status']>(state.status);
  const refresh = useCallback(async () => {
    const next = await loadSession();
    claimFor(next);
    // Signed up or in here: a new account has no time zone yet, and this browser knows it.
    if (status.current === 'anonymous' && next.status === 'authenticated') {
      getMe().then(adoptBrowserTimeZone, () => {});
    }
    status.current = next.status;
    setState((current) => (sameState(current, next) ? current : next));
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
