import type { TSiteInfo } from '@daybook/contracts';
import { type FormEvent, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router-dom';
import { EmailField, Field, FormError, useForm } from '../../components/form.tsx';
import { serverFieldErrors, serverMessage } from '../../lib/api.ts';
import { useSite } from '../../lib/site.tsx';
import { AuthCard, CheckEmailCard } from './AuthCard.tsx';
import { invalidateSession } from './allauth.ts';
import { signup } from './api.ts';
import { useAuth } from './auth-context.tsx';
import { PASSWORD_HINT, type SignupField, validateSignup } from './validation.ts';

export const SIGNUP_FAILED = 'Signup failed. Please check your information and try again.';
const FIELDS: readonly SignupField[] = ['inviteToken', 'email', 'password1', 'password2'];

export function SignupPage() {
  const [params] = useSearchParams();
  const { refresh } = useAuth();
  const navigate = useNavigate();
  const site = useSite();
  const form = useForm(
    { inviteToken: params.get('itoken') ?? '', email: '', password1: '', password2: '' },
    validateSignup,
  );
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState(false);
  /** The address a mail went to when the signup started no session (it already had an account). */
  const [mailedTo, setMailedTo] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  async function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (busy || !form.check()) return;
    setBusy(true);
    setError(null);
    const { inviteToken, email, password1, password2 } = form.values;
    try {
      await signup({ inviteToken: inviteToken.trim(), email: email.trim(), password1, password2 });
    } catch (err) {
      const fields = serverFieldErrors(err, FIELDS);
      form.showServerErrors(fields);
      const message = serverMessage(err);
      // The general message is left out when it only repeats a field's message.
      setError(message && Object.values(fields).includes(message) ? null : (message ?? SIGNUP_FAILED));
      setBusy(false);
      return;
    }
    // A new account is signed in: pick up the session before entering the tour. The server answers
    // an address that already has an account the same way, without a session, and mails its owner.
    invalidateSession();
    const auth = await refresh();
    if (auth.status !== 'authenticated') {
      setMailedTo(email.trim());
      setBusy(false);
      return;
    }
    setCreated(true);
    navigate('/demo-tour');
  }

  if (mailedTo) {
    return (
      <CheckEmailCard backLabel="Go to Sign In">
        <p>
          We sent a message to <strong className="auth-email">{mailedTo}</strong>. Open it to continue.
        </p>
        <p className="muted">Nothing after a few minutes? Check your spam or junk folder.</p>
      </CheckEmailCard>
    );
  }

  return (
    <AuthCard
      title="Create Account"
      subtitle="Daybook is invite-only. Enter the invite token you received to get started."
      footer={
        <>
          {site.status === 'ready' && <InviteFrom creator={site.site.creator} />}
          <p>
            Already have an account? <Link to="/auth/login">Sign in</Link>
          </p>
        </>
      }
    >
      {error && <FormError>{error}</FormError>}
      {created && (
        <div className="banner banner-success auth-alert" role="status">
          <div className="banner-message">Account created! Taking you to the tour...</div>
        </div>
      )}
      <form className="auth-form" noValidate onSubmit={onSubmit}>
        <Field
          {...form.field('inviteToken')}
          label="Invite Token"
          autoComplete="off"
          autoCapitalize="none"
          spellCheck={false}
        />
        <EmailField {...form.field('email')} />
        <Field
          {...form.field('password1')}
          label="Password"
          type="password"
          autoComplete="new-password"
          hint={PASSWORD_HINT}
        />
        <Field {...form.field('password2')} label="Confirm Password" type="password" autoComplete="new-password" />
        <button type="submit" className="btn btn-primary btn-lg btn-block" disabled={busy || created}>
          {busy || created ? 'Creating account...' : 'Sign Up'}
        </button>
      </form>
    </AuthCard>
  );
}

/** Who to ask for an invite: a way to reach them when this Daybook names one, else just who runs it. */
function InviteFrom({ creator }: { creator: TSiteInfo['creator'] }) {
  if (creator.email || creator.links.length)
    return (
      <p>
        No invite yet? <Link to={`/${creator.slug}`}>Request one from {creator.name}</Link>
      </p>
    );
  return <p>No invite yet? Ask {creator.name}, who runs this Daybook.</p>;
}
