import { type FormEvent, useEffect, useState } from 'react';
import { Link, useParams } from 'react-router-dom';
import { Field, FormError, useForm } from '../../components/form.tsx';
import { AuthCard, StatusCard } from './AuthCard.tsx';
import {
  checkPasswordResetKey,
  errorMessages,
  fieldErrors,
  invalidateSession,
  RATE_LIMITED_MESSAGE,
  resetPassword,
} from './allauth.ts';
import { PASSWORD_HINT, validateNewPassword } from './validation.ts';

export const RESET_LINK_INVALID = 'This reset link is invalid or has expired.';
export const PASSWORD_RESET_DONE = 'Your password has been reset.';
const UNEXPECTED = 'An unexpected error occurred. Please try again.';

type Phase = 'checking' | 'invalid' | 'unreachable' | 'ready' | 'done';

export function ResetPasswordPage() {
  const { key = '' } = useParams();
  const [phase, setPhase] = useState<Phase>(key ? 'checking' : 'invalid');
  const [email, setEmail] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const form = useForm({ password: '', confirm: '' }, validateNewPassword);

  useEffect(() => {
    if (!key) return;
    let current = true;
    checkPasswordResetKey(key)
      .then((res) => {
        if (!current) return;
        if (res.status === 200) {
          setEmail(res.data?.user?.email);
          setPhase('ready');
        } else setPhase(res.status === 400 ? 'invalid' : 'unreachable');
      })
      .catch(() => current && setPhase('unreachable'));
    return () => {
      current = false;
    };
  }, [key]);

  async function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (busy || !form.check()) return;
    setBusy(true);
    setError(null);
    try {
      const res = await resetPassword({ key, password: form.values.password });
      // 401: changed, and nobody is signed in (200 if the server signs the user in as well).
      if (res.status === 401 || res.status === 200) {
        invalidateSession();
        setPhase('done');
        return;
      }
      const fields = fieldErrors(res);
      if (fields.key) {
        setPhase('invalid');
        return;
      }
      const password = fields.password ?? fields.password1;
      if (password) form.showServerErrors({ password });
      const others = errorMessages(res, (e) => e.param !== 'password' && e.param !== 'password1');
      if (res.status === 429) setError(RATE_LIMITED_MESSAGE);
      else if (others.length) setError(others.join(' '));
      else if (!password) setError(UNEXPECTED);
    } catch {
      setError(UNEXPECTED);
    }
    setBusy(false);
  }

  if (phase === 'checking') return <StatusCard tone="loading" title="Checking your reset link..." />;
  if (phase === 'invalid' || phase === 'unreachable') {
    return (
      <StatusCard
        tone="error"
        title={phase === 'invalid' ? 'Link Expired' : 'Something Went Wrong'}
        actions={
          <Link to="/auth/forgot-password" className="btn btn-primary btn-block">
            Request a new link
          </Link>
        }
      >
        <p>{phase === 'invalid' ? RESET_LINK_INVALID : UNEXPECTED}</p>
        {phase === 'invalid' && <p className="muted">Reset links work once and expire after a few days.</p>}
      </StatusCard>
    );
  }
  if (phase === 'done') {
    return (
      <StatusCard
        tone="success"
        title="Password Reset"
        actions={
          <Link to="/auth/login" className="btn btn-primary btn-block">
            Sign In
          </Link>
        }
      >
        <p>{PASSWORD_RESET_DONE}</p>
        <p className="muted">You can now sign in with your new password.</p>
      </StatusCard>
    );
  }
  return (
    <AuthCard
      title="Choose a New Password"
      subtitle={
        email ? (
          <>
            For <strong className="auth-email">{email}</strong>
          </>
        ) : (
          'Pick a password you have not used before.'
        )
      }
      footer={
        <p>
          <Link to="/auth/login">Back to Sign In</Link>
        </p>
      }
    >
      {error && <FormError>{error}</FormError>}
      <form className="auth-form" noValidate onSubmit={onSubmit}>
        <Field
          {...form.field('password')}
          label="New Password"
          type="password"
          autoComplete="new-password"
          hint={PASSWORD_HINT}
        />
        <Field {...form.field('confirm')} label="Confirm New Password" type="password" autoComplete="new-password" />
        <button type="submit" className="btn btn-primary btn-lg btn-block" disabled={busy}>
          {busy ? 'Saving...' : 'Set New Password'}
        </button>
      </form>
    </AuthCard>
  );
}
