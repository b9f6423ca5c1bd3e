import { retryIn } from '@daybook/contracts';
import { Link, useSearchParams } from 'react-router-dom';
import { EmailField, FormError } from '../../components/form.tsx';
import { AuthCard, CheckEmailCard } from './AuthCard.tsx';
import { resendVerification } from './api.ts';
import { useEmailRequest } from './email-request.ts';

export const RESEND_FAILED = 'Failed to resend verification email.';

export function ResendVerificationPage() {
  const [params] = useSearchParams();
  const { form, busy, sentTo, answer, error, onSubmit } = useEmailRequest(
    params.get('email') ?? '',
    resendVerification,
    RESEND_FAILED,
  );

  if (sentTo && answer?.sent === false) {
    return (
      <CheckEmailCard backLabel="Return to Login">
        <p>
          We sent one to <strong className="auth-email">{sentTo}</strong> a moment ago; you can ask again in{' '}
          {retryIn(answer.retry_after)}.
        </p>
        <p className="muted">Nothing arrived? Check your spam or junk folder.</p>
      </CheckEmailCard>
    );
  }

  if (sentTo) {
    return (
      <CheckEmailCard backLabel="Return to Login">
        <p>
          A new verification email has been sent to <strong className="auth-email">{sentTo}</strong>. Open the link in
          it to activate your account.
        </p>
        <p className="muted">Nothing after a few minutes? Check your spam or junk folder.</p>
      </CheckEmailCard>
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
