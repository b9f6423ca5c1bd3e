// The account page: auth's switches, daily's settings and account-data's export and deletion together.
// A feature of its own because daily and account-data build on auth, so auth cannot show them.
import type { TUserMe } from '@daybook/contracts';
import { useCallback, useEffect, useId, useState } from 'react';
import { Link } from 'react-router-dom';
import { Banner } from '../../components/Banner.tsx';
import { Loading } from '../../components/Loading.tsx';
import { DeleteAccountSection, DownloadDataRow } from '../account-data/AccountData.tsx';
import { getMe } from '../auth/api.ts';
import { initialsOf, useAuth } from '../auth/auth-context.tsx';
import { PauseSwitch, SettingSwitch, useDailyMessagePause, useUserSetting } from '../auth/daily-pause.tsx';
import { useResendVerification } from '../auth/email-verification.tsx';
import { RESEND_FAILED } from '../auth/ResendVerificationPage.tsx';
import { signOut } from '../auth/sign-out.ts';
import { DailySettings } from '../daily/DailySettings.tsx';

export const PROFILE_LOAD_FAILED = 'Failed to load your account. Please try again later.';

const joinedFormat = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'long', day: 'numeric' });

function formatJoined(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : joinedFormat.format(date);
}

export function ProfilePage() {
  const { state } = useAuth();
  const [me, setMe] = useState<TUserMe | null>(null);
  const [loadFailed, setLoadFailed] = useState(false);
  const pause = useDailyMessagePause();
  const { receive } = pause;
  const pauseHintId = useId();
  const learning = useUserSetting('learn_from_chats');
  const receiveLearning = learning.receive;
  const learningHintId = useId();

  const load = useCallback(
    (signal?: AbortSignal) => {
      setLoadFailed(false);
      getMe(signal)
        .then((user) => {
          setMe(user);
          receive(user.is_daily_message_paused);
          receiveLearning(user.learn_from_chats);
        })
        .catch((err: Error) => {
          if (err.name !== 'AbortError') setLoadFailed(true);
        });
    },
    [receive, receiveLearning],
  );

  useEffect(() => {
    const controller = new AbortController();
    load(controller.signal);
    return () => controller.abort();
  }, [load]);

  const email = me?.email ?? state.user?.email ?? '';

  return (
    <div className="container page account-page">
      <header className="account-header">
        <span className="avatar avatar-lg" aria-hidden="true">
          {initialsOf(email)}
        </span>
        <div>
          <h1 className="page-title">Your Account</h1>
          <p className="page-subtitle">Your sign-in details, security and daily message settings.</p>
        </div>
      </header>

      {loadFailed && (
        <Banner
          action={
            <button type="button" className="btn btn-secondary btn-sm" onClick={() => load()}>
              Retry
            </button>
          }
        >
          {PROFILE_LOAD_FAILED}
        </Banner>
      )}
      {!me && !loadFailed && <Loading label="Loading your account..." />}

      {me && (
        <div className="account-sections">
          <section className="card account-section" aria-labelledby="account-details">
            <h2 id="account-details" className="account-section-title">
              Account
            </h2>
            <dl className="account-details">
              <div className="account-row">
                <dt>Email</dt>
                <dd>
                  <span className="account-email">{me.email}</span>
                  {me.email_verified ? (
                    <span className="badge badge-success">Verified</span>
                  ) : (
                    <span className="badge badge-warning">Not verified</span>
                  )}
                </dd>
              </div>
              <div className="account-row">
                <dt>Member since</dt>
                <dd>
                  <time dateTime={me.date_joined}>{formatJoined(me.date_joined)}</time>
                </dd>
              </div>
            </dl>
            {!me.email_verified && <VerifyHint email={me.email} />}
          </section>

          <section className="card account-section" aria-labelledby="account-security">
            <h2 id="account-security" className="account-section-title">
              Security
            </h2>
            <div className="account-action-row">
              <div>
                <p className="account-action-title">Password</p>
                <p className="muted account-action-text">Change the password you use to sign in.</p>
              </div>
              <Link to="/auth/change-password" className="btn btn-secondary btn-sm">
                Change password
              </Link>
            </div>
          </section>

          <section className="card account-section" aria-labelledby="account-daily">
            <h2 id="account-daily" className="account-section-title">
              Daily message
            </h2>
            <PauseSwitch paused={pause.paused} onToggle={() => void pause.toggle()} describedBy={pauseHintId} />
            <p id={pauseHintId} className="muted account-action-text">
              While paused, your assistant will not send your morning briefing. Chat and research keep working.
            </p>
            {pause.error && (
              <p className="field-error" role="alert">
                {pause.error}
              </p>
            )}
            <DailySettings user={me} />
          </section>

          <section className="card account-section" aria-labelledby="account-learning">
            <h2 id="account-learning" className="account-section-title">
              Learning
            </h2>
            <SettingSwitch
              label="Learn from my chats"
              checked={learning.value}
              onToggle={() => void learning.toggle()}
              describedBy={learningHintId}
            />
            <p id={learningHintId} className="muted account-action-text">
              When on, your assistant saves what it learns about you in chat as memories you can review on the Memories
              page. When off, it remembers nothing new.
            </p>
            {learning.error && (
              <p className="field-error" role="alert">
                {learning.error}
              </p>
            )}
          </section>

          <section className="card account-section" aria-labelledby="account-data">
            <h2 id="account-data" className="account-section-title">
              Your data
            </h2>
            <DownloadDataRow />
            <div className="account-links">
              <Link to="/memories" className="account-link">
                <span className="account-link-title">Memories</span>
                <span className="muted">What your assistant remembers about you</span>
              </Link>
              <Link to="/resources" className="account-link">
                <span className="account-link-title">History</span>
                <span className="muted">Your daily messages and research reports</span>
              </Link>
            </div>
          </section>

          <DeleteAccountSection hasPassword={me.has_usable_password} />

          <div className="account-signout">
            <SignOutButton />
          </div>
        </div>
      )}
    </div>
  );
}

function VerifyHint({ email }: { email: string }) {
  // The resend page is for signed-out visitors, so a signed-in user asks from here.
  const { status, note, send } = useResendVerification(email);
  return (
    <div className="auth-notice account-notice">
      <p className="auth-notice-title">Your email address has not been verified yet.</p>
      <p>Check your inbox for the verification link, or ask for a new one.</p>
      {status === 'sent' ? (
        <p role="status">A new verification email has been sent to {email}.</p>
      ) : status === 'throttled' ? (
        <p role="status">{note}</p>
      ) : (
        <button type="button" className="btn btn-secondary btn-sm" onClick={send} disabled={status === 'sending'}>
          {status === 'sending' ? 'Sending...' : 'Resend verification email'}
        </button>
      )}
      {status === 'failed' && (
        <p className="field-error" role="alert">
          {RESEND_FAILED}
        </p>
      )}
    </div>
  );
}

function SignOutButton() {
  const [busy, setBusy] = useState(false);
  return (
    <button
      type="button"
      className="btn btn-ghost"
      disabled={busy}
      onClick={() => {
        setBusy(true);
        void signOut();
      }}
    >
      {busy ? 'Signing out...' : 'Sign Out'}
    </button>
  );
}
