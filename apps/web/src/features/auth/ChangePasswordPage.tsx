import { type FormEvent, useEffect, useRef, useState } from 'react';
import { Link, useNavigate } from 'react-router-dom';
import { Field, useForm } from '../../components/form.tsx';
import { AuthCard, StatusCard } from './AuthCard.tsx';
import { changePassword, errorMessages, fieldErrors, RATE_LIMITED_MESSAGE } from './allauth.ts';
import { useAuth } from './auth-context.tsx';
import { PASSWORD_HINT, validateChangePassword } from './validation.ts';

export const CHANGE_REDIRECT_MS = 3_000;
export const CHANGE_FAILED = 'Failed to change password';
export const CHANGE_ERROR = 'An error occurred.';

type Phase = 'idle' | 'changing' | 'success' | 'error';

export function ChangePasswordPage() {
  const { state } = useAuth();
  const navigate = useNavigate();
  // Users without a usable password (e.g. calendar sign-in only) set one without the current one.
  const needsCurrent = state.user?.has_usable_password !== false;
  const form = useForm({ current: '', next: '', confirm: '' }, (values) =>
    validateChangePassword(values, { needsCurrent }),
  );
  const [phase, setPhase] = useState<Phase>('idle');
  const [message, setMessage] = useState('');
  const retried = useRef(false);

  useEffect(() => {
    if (phase !== 'success') return;
    const timer = setTimeout(() => navigate('/profile'), CHANGE_REDIRECT_MS);
    return () => clearTimeout(timer);
  }, [phase, navigate]);

  // Back from the error card: put the cursor where the problem is.
  useEffect(() => {
    if (phase === 'idle' && retried.current) {
      retried.current = false;
      form.focusFirstError();
    }
  });

  async function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (phase === 'changing' || !form.check()) return;
    setPhase('changing');
    const { current, next } = form.values;
    try {
      const res = await changePassword(
        needsCurrent ? { current_password: current, new_password: next } : { new_password: next },
      );
      if (res.status === 200) {
        setPhase('success');
        return;
      }
      const fields = fieldErrors(res);
      form.showServerErrors({
        current: fields.current_password ?? fields.oldPassword,
        next: fields.new_password ?? fields.password1,
      });
      const messages = errorMessages(res);
      setMessage(res.status === 429 ? RATE_LIMITED_MESSAGE : messages.length ? messages.join(' ') : CHANGE_FAILED);
    } catch {
      setMessage(CHANGE_ERROR);
    }
    setPhase('error');
  }

  if (phase === 'success') {
    return (
      <StatusCard
        tone="success"
        title="Password Changed Successfully!"
        actions={
          <Link to="/profile" className="btn btn-primary btn-block">
            Go to Profile
          </Link>
        }
      >
        <p>Use your new password the next time you sign in.</p>
        <p className="muted">Taking you to your profile...</p>
      </StatusCard>
    );
  }

  if (phase === 'error') {
    return (
      <StatusCard
        tone="error"
        title="Password Change Failed"
        actions={
          <>
            <button
              type="button"
              className="btn btn-primary btn-block"
              onClick={() => {
                retried.current = true;
                setPhase('idle');
              }}
            >
              Try Again
            </button>
            <Link to="/profile" className="btn btn-ghost btn-block">
              Back to your account
            </Link>
          </>
        }
      >
        <p>{message}</p>
      </StatusCard>
    );
  }

  const busy = phase === 'changing';
  return (
    <AuthCard
      title="Change Password"
      subtitle="Choose a strong password you don't use anywhere else."
      footer={
        <p>
          <Link to="/profile">Back to your account</Link>
        </p>
      }
    >
      <form className="auth-form" noValidate onSubmit={onSubmit}>
        {/* Lets password managers file the new password under the right account. */}
        <input type="email" name="username" autoComplete="username" value={state.user?.email ?? ''} readOnly hidden />
        {needsCurrent && (
          <Field {...form.field('current')} label="Current Password" type="password" autoComplete="current-password" />
        )}
        <Field
          {...form.field('next')}
          label="New Password"
          type="password"
          autoComplete="new-password"
          hint={PASSWORD_HINT}
        />
        <Field {...form.field('confirm')} label="Confirm New Password" type="password" autoComplete="new-password" />
        <button type="submit" className="btn btn-primary btn-lg btn-block" disabled={busy}>
          {busy ? 'Changing Password...' : 'Change Password'}
        </button>
      </form>
    </AuthCard>
  );
}
