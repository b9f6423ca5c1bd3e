import { type ReactNode, useState } from 'react';
import { Navigate, useLocation } from 'react-router-dom';
import { Loading } from '../components/Loading.tsx';
import { useAuth } from '../features/auth/auth-context.tsx';
import { useEmailVerification } from '../features/auth/email-verification.tsx';

export const LOGIN_PATH = '/auth/login';

export function loginRedirect(pathname: string, search: string): string {
  return `${LOGIN_PATH}?next=${encodeURIComponent(pathname + search)}`;
}

type GuardProps =
  | { children: ReactNode; requireAuth: true; anonymousOnly?: never; redirectTo?: never }
  | { children: ReactNode; anonymousOnly: true; redirectTo?: string; requireAuth?: never };

/**
 * Loading... while the session loads (a signed-in page then waits for the account check too, so the
 * verification reminder and the page appear together); signed-out visitors of a login-required
 * route go to sign in (the path and query they wanted ride along in ?next=); signed-in visitors of
 * an anonymous-only route go to `redirectTo` (unless they signed in on that very page).
 */
export function RouteGuard(props: GuardProps) {
  const { state } = useAuth();
  const { checking } = useEmailVerification();
  const location = useLocation();
  // Once an anonymous-only page has been shown, signing in on it does not yank it away: the page
  // itself goes on (sign in to ?next=, sign up to the tour, ...).
  const [shownAnonymously, setShownAnonymously] = useState(false);
  if (props.anonymousOnly && state.status === 'anonymous' && !shownAnonymously) setShownAnonymously(true);
  if (state.status === 'loading') return <Loading label="Loading..." />;
  // A moment more, showing nothing: a spinner shown here would be pushed down by the reminder.
  if (props.requireAuth && checking) return null;
  if (props.requireAuth && state.status !== 'authenticated') {
    return <Navigate to={loginRedirect(location.pathname, location.search)} replace state={{ from: location }} />;
  }
  if (props.anonymousOnly && state.status === 'authenticated' && !shownAnonymously) {
    return <Navigate to={props.redirectTo ?? '/'} replace />;
  }
  return <>{props.children}</>;
}
