import { type FormEvent, useState } from 'react';
import { Link, useSearchParams } from 'react-router-dom';
import { EmailField, FormError, useForm } from '../../components/form.tsx';
import { ApiError, serverFieldErrors } from '../../lib/api.ts';
import { AuthCard, StatusCard } from './AuthCard.tsx';
import { RATE_LIMITED_MESSAGE } from './allauth.ts';
import { resendVerification } from './api.ts';
import { validateEmailForm } from './validation.ts';

export const RESEND_FAILED = 'Failed to resend verification email.';

export function ResendVerificationPage() {
  const [params] = useSearchParams();
  const form = useForm({ email: params.get('email') ?? '' }, validateEmailForm);
  const [busy, setBusy] = useState(false);
  const [sentTo, setSentTo] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  async function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (busy || !form.check()) return;
    setBusy(true);
    setError(null);
    const email = form.values.email.trim();
    try {
      await resendVerification(email);
      setSentTo(email);
    } catch (err) {
      const fields = serverFieldErrors(err, ['email']);
      form.showServerErrors(fields);
      if (err instanceof ApiError && err.status === 429) setError(RATE_LIMITED_MESSAGE);
      else if (!fields.email) setError(RESEND_FAILED);
    } finally {
      setBusy(false);
    }
  }

  if (sentTo) {
    return (
      <StatusCard
        tone="info"
        title="Check Your Email"
        actions={
          <Link to="/auth/login" className="btn btn-primary btn-block">
            Return to Login
          </Link>
        }
      >
        <p>
          A new verification email has been sent to <strong className="auth-email">{sentTo}</strong>. Open the link in
          it to activate your account.
        </p>
        <p className="muted">Nothing after a few minutes? Check your spam or junk folder.</p>
      </StatusCard>
    );
  }

  return (
    <AuthCard
      title="Resend Verification Email"
      subtitle="Enter the address you signed up with and we'll send you a new verification link."
      footer={
        <p>
          <Link to="/auth/login">Back to Sign In</Link>
        </p>
      }
    >
      {error && <FormError>{error}</FormError>}
      <form className="auth-form" noValidate onSubmit={onSubmit}>
        <EmailField {...form.field('email')} />
        <button type="submit" className="btn btn-primary btn-lg btn-block" disabled={busy}>
          {busy ? 'Sending...' : 'Resend Verification Email'}
        </button>
      </form>
    </AuthCard>
  );
}
