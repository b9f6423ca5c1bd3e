import { useEffect } from 'react';
import { Link, useNavigate } from 'react-router-dom';
import { EmailField, FormError } from '../../components/form.tsx';
import { AuthCard, CheckEmailCard } from './AuthCard.tsx';
import { requestPasswordReset } from './api.ts';
import { useEmailRequest } from './email-request.ts';

export const RESET_REDIRECT_MS = 3_000;
export const RESET_SENT = 'Password reset email sent. Please check your inbox.';
export const RESET_FAILED = 'An error occurred. Please try again.';

export function ForgotPasswordPage() {
  const navigate = useNavigate();
  const { form, busy, sentTo, error, onSubmit } = useEmailRequest('', requestPasswordReset, RESET_FAILED);
  const sent = sentTo !== null;

  useEffect(() => {
    if (!sent) return;
    const timer = setTimeout(() => navigate('/login'), RESET_REDIRECT_MS);
    return () => clearTimeout(timer);
  }, [sent, navigate]);

  if (sent) {
    return (
      <CheckEmailCard backLabel="Back to Sign In">
        <p>{RESET_SENT}</p>
        <p className="muted">Taking you back to sign in...</p>
      </CheckEmailCard>
    );
  }

  return (
    <AuthCard
      title="Reset Password"
      subtitle="Enter the email address you signed up with and we'll send you a link to choose a new password."
      footer={
        <p>
          Remembered it? <Link to="/auth/login">Sign in</Link>
        </p>
      }
    >
      {error && <FormError>{error}</FormError>}
      <form className="auth-form" noValidate onSubmit={onSubmit}>
        <EmailField {...form.field('email')} />
        <button type="submit" className="btn btn-primary btn-lg btn-block" disabled={busy}>
          {busy ? 'Sending...' : 'Reset Password'}
        </button>
      </form>
    </AuthCard>
  );
}
