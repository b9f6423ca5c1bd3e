// Email verification for signed-in users. Signup signs the new user in, but the next sign-in needs a
// verified address: a slim reminder under the nav bar says so until the link is used, and offers a
// new link (the same "resend" the profile page has).

import { resendThrottled, type TUserMe } from '@daybook/contracts';
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react';
import { useLocation } from 'react-router-dom';
import { getMe, resendVerification } from './api.ts';
import { useAuth } from './auth-context.tsx';
import { RESEND_FAILED } from './ResendVerificationPage.tsx';
import { adoptBrowserTimeZone } from './time-zone.ts';

/** sessionStorage: the id of the user who dismissed the reminder in this browser session. */
export const REMINDER_DISMISSED_KEY = 'daybook.verify-reminder-dismissed';

/** The server sends one verification link per address every 3 minutes. */
const RESEND_COOLDOWN_S = 180;

/** `throttled`: a link went out moments ago, so none was sent now. */
export type ResendStatus = 'idle' | 'sending' | 'sent' | 'throttled' | 'failed';

/** Mails a new verification link to a signed-in user's address (the resend page is for signed-out visitors). */
export function useResendVerification(email: string) {
  const [status, setStatus] = useState<ResendStatus>('idle');
  /** When throttled: what to tell the user. */
  const [note, setNote] = useState('');
  /** Once the cooldown is over, Resend works again without a reload. */
  const [againAt, setAgainAt] = useState<number | null>(null);
  const send = useCallback(async () => {
    setStatus('sending');
    try {
      const answer = await resendVerification(email);
      setNote(answer.sent ? '' : resendThrottled(answer.retry_after));
      setStatus(answer.sent ? 'sent' : 'throttled');
      setAgainAt(Date.now() + (answer.sent ? RESEND_COOLDOWN_S : (answer.retry_after ?? RESEND_COOLDOWN_S)) * 1000);
    } catch {
      setStatus('failed');
    }
  }, [email]);
  useEffect(() => {
    if (againAt === null) return;
    const timer = setTimeout(
      () => {
        setStatus('idle');
        setNote('');
        setAgainAt(null);
      },
      Math.max(0, againAt - Date.now()),
    );
    return () => clearTimeout(timer);
  }, [againAt]);
  return { status, note, send };
}

interface EmailVerificationValue {
  /** The signed-in user's id while their address is known to be unverified, else null. */
  unverifiedUser: string | null;
  /** That address. */
  email: string;
  /** A verification link just worked: the reminder goes, and the account is checked again. */
  verified(): void;
  /**
   * A user is signed in and their account has not answered yet. Signed-in pages wait for it, so that
   * the reminder and the page appear together instead of the reminder pushing a shown page down.
   */
  checking: boolean;
}

const EmailVerificationContext = createContext<EmailVerificationValue>({
  unverifiedUser: null,
  email: '',
  verified: () => {},
  checking: false,
});

export const useEmailVerification = () => useContext(EmailVerificationContext);

interface Account {
  user: string;
  email: string;
  /** null: the account could not be asked (no reminder then). */
  verified: boolean | null;
}

let early: ReturnType<typeof getMe> | null = null;
/** The early answer once it has arrived: a provider mounting after it starts from it. */
let earlyAnswer: TUserMe | null = null;

/**
 * Asks for the account before React has rendered its user (main.tsx): alongside the session check on
 * a page only signed-in users see, else once the session names a user. Signed-in pages wait for this
 * answer (see `checking`).
 */
export function checkAccountEarly() {
  if (early) return;
  early = getMe();
  early.then(
    (me) => {
      earlyAnswer = me;
    },
    // Handled where it is taken; this only keeps a failure before then from counting as unhandled.
    () => {},
  );
}

/** Settles once the early account answer (if one was asked for) has arrived or failed. */
export function accountEarlySettled(): Promise<void> {
  return (early ?? Promise.resolve()).then(
    () => {},
    () => {},
  );
}

const accountFrom = (user: string, me: TUserMe): Account => ({ user, email: me.email, verified: me.email_verified });

/** The arrived early answer, if it is this user's. */
function earlyAccount(user: string | null): Account | null {
  return user !== null && earlyAnswer && String(earlyAnswer.id) === user ? accountFrom(user, earlyAnswer) : null;
}

/** The early answer if it is this user's (the session may have changed since), else a new request. */
function accountOf(user: string, signal: AbortSignal) {
  const taken = early;
  early = null;
  earlyAnswer = null;
  if (!taken) return getMe(signal);
  return taken.then(
    (me) => (String(me.id) === user ? me : getMe(signal)),
    () => getMe(signal),
  );
}

/**
 * Asks GET /api/users/me/ once per sign-in (not per page) whether the address is verified. Lives in
 * the layout, which stays mounted while the user moves between pages.
 */
export function EmailVerificationProvider({ children }: { children: ReactNode }) {
  const { state } = useAuth();
  const user = state.status === 'authenticated' ? String(state.user.id) : null;
  const [account, setAccount] = useState<Account | null>(() => earlyAccount(user));
  const [checks, setChecks] = useState(0);

  // biome-ignore lint/correctness/useExhaustiveDependencies: `checks` asks again after a verification
  useEffect(() => {
    if (user === null) return;
    const controller = new AbortController();
    accountOf(user, controller.signal)
      .then((me) => {
        const next = accountFrom(user, me);
        // The same answer as the one the provider started from changes nothing.
        setAccount((current) =>
          current?.user === next.user && current.email === next.email && current.verified === next.verified
            ? current
            : next,
        );
        // A user without a time zone gets this device's (once; the daily message is delivered by it).
        void adoptBrowserTimeZone(me);
      })
      .catch(() => {
        // No answer, no reminder: the profile page still shows the state of the address.
        if (!controller.signal.aborted) {
          setAccount((current) => (current?.user === user ? current : { user, email: '', verified: null }));
        }
      });
    return () => controller.abort();
  }, [user, checks]);

  const verified = useCallback(() => {
    setAccount((current) => current && { ...current, verified: true });
    setChecks((n) => n + 1);
  }, []);

  const unverified = account !== null && account.user === user && account.verified === false;
  const checking = user !== null && account?.user !== user;
  const value = useMemo(
    () => ({
      unverifiedUser: unverified ? user : null,
      email: unverified ? (account?.email ?? '') : '',
      verified,
      checking,
    }),
    [unverified, user, account, verified, checking],
  );
  return <EmailVerificationContext.Provider value={value}>{children}</EmailVerificationContext.Provider>;
}

function readDismissed(): string | null {
  try {
    return window.sessionStorage.getItem(REMINDER_DISMISSED_KEY);
  } catch {
    return null;
  }
}

function storeDismissed(user: string) {
  try {
    window.sessionStorage.setItem(REMINDER_DISMISSED_KEY, user);
  } catch {
    // Storage blocked: the reminder stays hidden until the page reloads.
  }
}

const onVerifyPage = (pathname: string) => /^\/auth\/verify-email(\/|$)/.test(pathname);

/** "Please verify your email address": shown to a signed-in, unverified user on every page but the verify page. */
export function VerifyEmailReminder() {
  const { unverifiedUser, email } = useEmailVerification();
  const { pathname } = useLocation();
  const [dismissedFor, setDismissedFor] = useState(readDismissed);
  const resend = useResendVerification(email);

  if (unverifiedUser === null || dismissedFor === unverifiedUser || onVerifyPage(pathname)) return null;
  const busy = resend.status === 'sending' || resend.status === 'sent' || resend.status === 'throttled';
  return (
    <section className="verify-reminder" aria-label="Email verification">
      <div className="container verify-reminder-inner">
        <svg className="verify-reminder-icon" viewBox="0 0 20 20" aria-hidden="true" focusable="false">
          <rect x="2" y="4" width="16" height="12" rx="2" fill="none" stroke="currentColor" strokeWidth="1.6" />
          <path d="m3 5.5 7 5 7-5" fill="none" stroke="currentColor" strokeWidth="1.6" strokeLinejoin="round" />
        </svg>
        <p className="verify-reminder-text">
          Please verify your email address. We sent a link to <strong>{email}</strong>; you will need it to sign in next
          time.{' '}
          <button
            type="button"
            className="verify-reminder-resend"
            // Not `disabled`, so keyboard focus stays on it while it sends and after.
            aria-disabled={busy || undefined}
            onClick={() => {
              if (!busy) void resend.send();
            }}
          >
            {resend.status === 'sending' ? 'Sending...' : resend.status === 'sent' ? 'Sent!' : 'Resend'}
          </button>
          {resend.status === 'throttled' && <span> {resend.note}</span>}
          {resend.status === 'failed' && (
            <span className="verify-reminder-error" role="alert">
              {' '}
              {RESEND_FAILED}
            </span>
          )}
        </p>
        <span className="visually-hidden" role="status">
          {resend.status === 'sent'
            ? `A new verification link was sent to ${email}.`
            : resend.status === 'throttled'
              ? resend.note
              : ''}
        </span>
        <button
          type="button"
          className="banner-close"
          aria-label="Dismiss"
          onClick={() => {
            storeDismissed(unverifiedUser);
            setDismissedFor(unverifiedUser);
          }}
        >
          ×
        </button>
      </div>
    </section>
  );
}
