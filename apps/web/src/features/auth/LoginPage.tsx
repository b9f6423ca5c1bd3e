import type { TSessionEndedReason } from '@daybook/contracts';
import { type FormEvent, useState } from 'react';
import { Link, useLocation, useNavigate } from 'react-router-dom';
import { EmailField, Field, FormError, useForm } from '../../components/form.tsx';
import { AuthCard } from './AuthCard.tsx';
import {
  type AllauthResponse,
  errorMessages,
  fieldErrors,
  hasPendingFlow,
  invalidateSession,
  login,
  RATE_LIMITED_MESSAGE,
} from './allauth.ts';
import { getMe } from './api.ts';
import { useAuth } from './auth-context.tsx';
import { landingAfterSignIn, rememberedPath } from './redirect.ts';
import { validateLogin } from './validation.ts';

export const LOGIN_FAILED = 'Login failed. Please check your credentials.';
export const LOGIN_UNEXPECTED = 'An unexpected error occurred. Please try again.';
export const SESSION_NOT_VALID = 'Authentication failed after login. Session may not be valid.';
export const NOT_VERIFIED = 'Your email address has not been verified yet.';

/** Why the server ended this browser's session, as the person reads it here. */
export const SESSION_ENDED: Record<TSessionEndedReason, string> = {
  password_changed: 'You were signed out because your password was changed. Sign in with your new password.',
};

/** The session cookie can lag behind the login answer: recheck after 100 ms, then once more after 500 ms. */
const RECHECK_DELAYS_MS = [100, 500];

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function isUnverified(res: AllauthResponse): boolean {
  if (hasPendingFlow(res, 'verify_email')) return true;
  if (res.errors?.some((error) => error.code === 'account_email_verification_required')) return true;
  const texts = [...errorMessages(res), res.detail, res.message].filter((t): t is string => typeof t === 'string');
  return texts.some((text) => /verif/i.test(text));
}

type Problem = { kind: 'error'; message: string } | { kind: 'unverified'; email: string } | null;

export function LoginPage() {
  const { state, refresh } = useAuth();
  const ended = state.status === 'anonymous' ? state.ended : undefined;
  const navigate = useNavigate();
  const location = useLocation();
  const form = useForm({ email: '', password: '' }, validateLogin);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem>(null);

  const fail = (next: Problem) => {
    setProblem(next);
    setBusy(false);
  };

  async function confirmSession(): Promise<boolean> {
    for (const delay of RECHECK_DELAYS_MS) {
      await wait(delay);
      invalidateSession();
      if ((await refresh()).status === 'authenticated') return true;
    }
    return false;
  }

  async function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (busy || !form.check()) return;
    setBusy(true);
    setProblem(null);
    const email = form.values.email.trim();
    try {
      const res = await login({ email, password: form.values.password });
      // 409: somebody is already signed in in this browser; carry on as after a login.
      if (res.status === 200 || res.status === 409) {
        if (!(await confirmSession())) return fail({ kind: 'error', message: SESSION_NOT_VALID });
        const onboarded = async () => (await getMe()).onboarded;
        navigate(await landingAfterSignIn(rememberedPath(location.search, location.state), onboarded), {
          replace: true,
        });
        return;
      }
      if (isUnverified(res)) return fail({ kind: 'unverified', email });
      if (res.status === 429) return fail({ kind: 'error', message: RATE_LIMITED_MESSAGE });
      if (res.status === 400) {
        const emailError = fieldErrors(res).email;
        if (emailError) form.showServerErrors({ email: emailError });
        const message = errorMessages(res, (error) => error.param !== 'email').join(' ');
        if (message || !emailError) return fail({ kind: 'error', message: message || LOGIN_FAILED });
        return fail(null);
      }
      if (res.status === 401) return fail({ kind: 'error', message: LOGIN_FAILED });
      return fail({ kind: 'error', message: LOGIN_UNEXPECTED });
    } catch {
      return fail({ kind: 'error', message: LOGIN_UNEXPECTED });
    }
  }

  return (
    <AuthCard
      title="Sign In"
      subtitle="Welcome back. Sign in to pick up where you left off."
      footer={
        <p>
          Don't have an account? <Link to="/auth/signup">Sign up</Link>
        </p>
      }
    >
      {ended && (
        <div className="banner banner-info auth-alert" role="status">
          <div className="banner-message">{SESSION_ENDED[ended]}</div>
        </div>
      )}
      {problem?.kind === 'error' && <FormError>{problem.message}</FormError>}
      {problem?.kind === 'unverified' && (
        <div className="auth-notice" role="alert">
          <p className="auth-notice-title">{NOT_VERIFIED}</p>
          <p>Please check your inbox for the verification link we sent you and open it to activate your account.</p>
          <Link to={`/auth/resend-verification?email=${encodeURIComponent(problem.email)}`}>
            Resend verification email
          </Link>
        </div>
      )}
      <form className="auth-form" noValidate onSubmit={onSubmit}>
        {/* Signing in is this page's one task: the cursor starts in the first field. */}
        <EmailField {...form.field('email')} autoFocus />
        <Field
          {...form.field('password')}
          label="Password"
          type="password"
          autoComplete="current-password"
          after={
            <Link to="/auth/forgot-password" className="field-link">
              Forgot your password?
            </Link>
          }
        />
        <button type="submit" className="btn btn-primary btn-lg btn-block" disabled={busy}>
          {busy ? 'Signing in...' : 'Sign In'}
        </button>
      </form>
    </AuthCard>
  );
}
