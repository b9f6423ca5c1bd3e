import { useEffect, useRef, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router-dom';
import { StatusCard } from './AuthCard.tsx';
import { verifyEmail } from './allauth.ts';
import { getMe } from './api.ts';
import { useAuth } from './auth-context.tsx';
import { useEmailVerification } from './email-verification.tsx';
import { landingAfterSignIn } from './redirect.ts';

export const VERIFY_REDIRECT_MS = 2_000;
export const VERIFICATION_FAILED = 'Email verification failed';
export const INVALID_LINK = 'Invalid verification link';
export const VERIFY_UNEXPECTED = 'An unexpected error occurred during verification.';

type State =
  | { status: 'loading' }
  | { status: 'success'; signedIn: boolean }
  | { status: 'already'; signedIn: boolean }
  | { status: 'error'; message: string };

export function VerifyEmailPage() {
  const { key } = useParams();
  const { refresh } = useAuth();
  const { verified } = useEmailVerification();
  const navigate = useNavigate();
  const [state, setState] = useState<State>(() =>
    key ? { status: 'loading' } : { status: 'error', message: INVALID_LINK },
  );
  // StrictMode runs effects twice in development; a key is only ever submitted once.
  const submitted = useRef<string | null>(null);

  useEffect(() => {
    if (!key || submitted.current === key) return;
    submitted.current = key;
    verifyEmail(key)
      .then(async (res) => {
        // 200: verified and signed in. 401: verified, but this browser is not signed in.
        if (res.status === 200) {
          const auth = await refresh();
          verified();
          setState({ status: 'success', signedIn: auth.status === 'authenticated' });
        } else if (res.status === 401) {
          verified();
          setState({ status: 'success', signedIn: false });
        } else if (res.status === 409) {
          // A genuine link opened again: its address is verified already.
          const auth = await refresh();
          verified();
          setState({ status: 'already', signedIn: auth.status === 'authenticated' });
        } else if (res.status === 400) setState({ status: 'error', message: VERIFICATION_FAILED });
        else setState({ status: 'error', message: VERIFY_UNEXPECTED });
      })
      .catch(() => setState({ status: 'error', message: VERIFY_UNEXPECTED }));
  }, [key, refresh, verified]);

  useEffect(() => {
    if (state.status !== 'success') return;
    let cancelled = false;
    const timer = setTimeout(async () => {
      const to = state.signedIn ? await landingAfterSignIn('/', async () => (await getMe()).onboarded) : '/auth/login';
      if (!cancelled) navigate(to, { replace: true });
    }, VERIFY_REDIRECT_MS);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [state, navigate]);

  if (state.status === 'loading') return <StatusCard tone="loading" title="Verifying your email..." />;
  if (state.status === 'already') {
    return (
      <StatusCard
        tone="success"
        title="Email Already Verified"
        actions={
          state.signedIn ? (
            <Link to="/" className="btn btn-primary btn-block">
              Continue to Daybook
            </Link>
          ) : (
            <Link to="/auth/login" className="btn btn-primary btn-block">
              Sign In
            </Link>
          )
        }
      >
        <p>This link was used before: your email address is verified.</p>
        {!state.signedIn && <p className="muted">Sign in with your email and password.</p>}
      </StatusCard>
    );
  }
  if (state.status === 'success') {
    return (
      <StatusCard tone="success" title="Email Verified!">
        <p>Thanks for confirming your address.</p>
        <p className="muted">{state.signedIn ? 'Taking you to Daybook...' : 'Redirecting you to login...'}</p>
      </StatusCard>
    );
  }
  return (
    <StatusCard
      tone="error"
      title="Verification Failed"
      actions={
        <>
          <Link to="/auth/login" className="btn btn-primary btn-block">
            Go to Login
          </Link>
          <Link to="/auth/resend-verification" className="btn btn-ghost btn-block">
            Send a new link
          </Link>
        </>
      }
    >
      <p>{state.message}</p>
      <p className="muted">Verification links expire after a few days and work only once.</p>
    </StatusCard>
  );
}
