import type { TSiteInfo } from '@daybook/contracts';
import { type FormEvent, useEffect, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router-dom';
import { EmailField, Field, FormError, useForm } from '../../components/form.tsx';
import { Loading } from '../../components/Loading.tsx';
import { ApiError, serverFieldErrors, serverMessage } from '../../lib/api.ts';
import { useSite } from '../../lib/site.tsx';
import { AuthCard, CheckEmailCard } from './AuthCard.tsx';
import { invalidateSession } from './allauth.ts';
import { lookupInvite, signup } from './api.ts';
import { useAuth } from './auth-context.tsx';
import { PASSWORD_HINT, type SignupField, validateSignup } from './validation.ts';

export const SIGNUP_FAILED = 'Signup failed. Please check your information and try again.';
const FIELDS: readonly SignupField[] = ['inviteToken', 'email', 'password1', 'password2'];
export const BOUND_EMAIL_HINT = 'This invite is for this address only, so it cannot be changed.';

/** What the signup page knows of the invite its link (?itoken=) carries. */
type Invite =
  | { state: 'none' }
  | { state: 'checking' }
  /** Usable now: the token stays out of sight, and a bound address is the one to sign up with. */
  | { state: 'valid'; email: string | null }
  /** Unusable (used up, expired, revoked, unknown), and why. */
  | { state: 'invalid'; reason: string }
  /** The check failed (offline, server trouble): the token is shown for the person to send as is. */
  | { state: 'unknown' };

type KnownInvite = Exclude<Invite, { state: 'checking' }>;

function useInvite(token: string): Invite {
  const [invite, setInvite] = useState<Invite>(token ? { state: 'checking' } : { state: 'none' });
  useEffect(() => {
    if (!token) {
      setInvite({ state: 'none' });
      return;
    }
    setInvite({ state: 'checking' });
    const abort = new AbortController();
    lookupInvite(token, abort.signal).then(
      ({ email }) => setInvite({ state: 'valid', email }),
      (err: unknown) => {
        if (abort.signal.aborted) return;
        if (err instanceof ApiError && err.status === 404 && err.code === 'not_found')
          setInvite({ state: 'invalid', reason: err.message });
        else setInvite({ state: 'unknown' });
      },
    );
    return () => abort.abort();
  }, [token]);
  return invite;
}

export function SignupPage() {
  const [params] = useSearchParams();
  const token = (params.get('itoken') ?? '').trim();
  const invite = useInvite(token);
  if (invite.state === 'checking')
    return (
      <AuthCard title="Create Account">
        <Loading label="Checking your invite..." />
      </AuthCard>
    );
  return <SignupForm key={`${token}:${invite.state}`} token={token} invite={invite} />;
}

function SignupForm({ token, invite }: { token: string; invite: KnownInvite }) {
  const { refresh } = useAuth();
  const navigate = useNavigate();
  const site = useSite();
  // A usable invite's token came with the link: it is sent, never asked for.
  const tokenFromLink = invite.state === 'valid';
  const boundEmail = invite.state === 'valid' ? invite.email : null;
  const form = useForm(
    {
      inviteToken: tokenFromLink || invite.state === 'unknown' ? token : '',
      email: boundEmail ?? '',
      password1: '',
      password2: '',
    },
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
      // Without a token field, what the server says of the token is the form's message.
      const fields = serverFieldErrors(
        err,
        FIELDS.filter((f) => !(tokenFromLink && f === 'inviteToken')),
      );
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

  const creator = site.status === 'ready' ? site.site.creator : null;
  let subtitle = 'Daybook is invite-only. Enter the invite token you received to get started.';
  if (boundEmail) subtitle = "You're invited. Choose a password to create your account.";
  else if (tokenFromLink) subtitle = "You're invited. Enter your email and choose a password to create your account.";
  return (
    <AuthCard
      title="Create Account"
      subtitle={subtitle}
      footer={
        <>
          {/* Who to ask, for someone without an invite (an unusable link's notice says it there). */}
          {creator && (invite.state === 'none' || invite.state === 'unknown') && <InviteFrom creator={creator} />}
          <p>
            Already have an account? <Link to="/auth/login">Sign in</Link>
          </p>
        </>
      }
    >
      {invite.state === 'invalid' && (
        <div className="auth-notice" role="alert">
          <p className="auth-notice-title">This invite link can't be used.</p>
          <p>{invite.reason}</p>
          {creator && <InviteFrom creator={creator} lead="Need a new invite?" />}
        </div>
      )}
      {error && <FormError>{error}</FormError>}
      {created && (
        <div className="banner banner-success auth-alert" role="status">
          <div className="banner-message">Account created! Taking you to the tour...</div>
        </div>
      )}
      <form className="auth-form" noValidate onSubmit={onSubmit}>
        {!tokenFromLink && (
          <Field
            {...form.field('inviteToken')}
            label="Invite Token"
            autoComplete="off"
            autoCapitalize="none"
            spellCheck={false}
          />
        )}
        {/* The server signs up only the address a bound invite names. */}
        <EmailField
          {...form.field('email')}
          readOnly={boundEmail !== null}
          hint={boundEmail !== null ? BOUND_EMAIL_HINT : undefined}
        />
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
function InviteFrom({ creator, lead = 'No invite yet?' }: { creator: TSiteInfo['creator']; lead?: string }) {
  if (creator.email || creator.links.length)
    return (
      <p>
        {lead} <Link to={`/${creator.slug}`}>Request one from {creator.name}</Link>
      </p>
    );
  return (
    <p>
      {lead} Ask {creator.name}, who runs this Daybook.
    </p>
  );
}
