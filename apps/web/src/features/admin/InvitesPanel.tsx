// Invites: make one (uses, expiry, an optional address it is bound to, mailed there if asked), copy
// its link (shown once: only a hash of the token is kept), and see and revoke the others.
import type { TInvite } from '@daybook/contracts';
import { type FormEvent, useCallback, useEffect, useId, useRef, useState } from 'react';
import { Banner } from '../../components/Banner.tsx';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { EmailField, Field, useForm } from '../../components/form.tsx';
import { Loading } from '../../components/Loading.tsx';
import { ApiError, GENERIC_ERROR, serverFieldErrors, serverMessage } from '../../lib/api.ts';
import { createInvite, isForbidden, listInvites, revokeInvite, sendInvite } from './api.ts';
import { localDateTime, relativeTime } from './format.ts';

export const INVITES_LOAD_FAILED = 'Failed to load invites. Please try again.';
export const REVOKE_FAILED = 'Failed to revoke the invite. Please try again.';
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

type Values = { uses: string; days: string; email: string };

export function validateInvite(values: Values, send: boolean) {
  const errors: Partial<Record<keyof Values, string>> = {};
  const uses = values.uses.trim();
  if (!/^\d+$/.test(uses) || Number(uses) < 1 || Number(uses) > 10_000)
    errors.uses = 'Enter a whole number from 1 to 10,000.';
  const days = values.days.trim();
  if (days && (!/^\d+$/.test(days) || Number(days) < 1 || Number(days) > 3650))
    errors.days = 'Enter a number of days from 1 to 3650, or leave it empty for no expiry.';
  const email = values.email.trim();
  if (email && !EMAIL_RE.test(email)) errors.email = 'Invalid email address';
  else if (!email && send) errors.email = 'Enter the address to send the invite to.';
  return errors;
}

interface Created {
  url: string;
  sentTo: string | null;
  boundTo: string | null;
}

export function InvitesPanel({ onForbidden }: { onForbidden: () => void }) {
  const [invites, setInvites] = useState<TInvite[] | null>(null);
  const [loadFailed, setLoadFailed] = useState(false);
  const [reloads, setReloads] = useState(0);
  const [toRevoke, setToRevoke] = useState<TInvite | null>(null);
  const [revoking, setRevoking] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);

  // biome-ignore lint/correctness/useExhaustiveDependencies: `reloads` asks again (Retry)
  useEffect(() => {
    const controller = new AbortController();
    setLoadFailed(false);
    listInvites(controller.signal).then(
      (list) => setInvites(list.results),
      (err: unknown) => {
        if ((err as Error).name === 'AbortError') return;
        if (isForbidden(err)) onForbidden();
        else setLoadFailed(true);
      },
    );
    return () => controller.abort();
  }, [onForbidden, reloads]);

  const added = useCallback((invite: TInvite) => setInvites((list) => [invite, ...(list ?? [])]), []);

  async function confirmRevoke() {
    if (!toRevoke) return;
    setRevoking(true);
    try {
      const revoked = await revokeInvite(toRevoke.id);
      setInvites((list) => list?.map((i) => (i.id === revoked.id ? revoked : i)) ?? null);
      setNotice(null);
    } catch (err) {
      setNotice(serverMessage(err) ?? REVOKE_FAILED);
    }
    setRevoking(false);
    setToRevoke(null);
  }

  return (
    <div className="admin-invites">
      <CreateInviteForm onCreated={added} onForbidden={onForbidden} />

      <div className="admin-section-head">
        <h2 className="admin-section-title">All invites</h2>
        {invites && (
          <p className="admin-count" aria-live="polite">
            {invites.length === 1 ? '1 invite' : `${invites.length} invites`}
          </p>
        )}
      </div>
      {notice && (
        <div className="admin-banners">
          <Banner onDismiss={() => setNotice(null)}>{notice}</Banner>
        </div>
      )}
      {loadFailed && (
        <div className="admin-banners">
          <Banner
            action={
              <button type="button" className="btn btn-secondary btn-sm" onClick={() => setReloads((n) => n + 1)}>
                Retry
              </button>
            }
          >
            {INVITES_LOAD_FAILED}
          </Banner>
        </div>
      )}
      {invites === null ? (
        !loadFailed && <Loading label="Loading invites..." />
      ) : invites.length === 0 ? (
        <div className="card admin-empty">
          <p>No invites yet. Create one above and send its link to someone.</p>
        </div>
      ) : (
        <InviteTable invites={invites} onRevoke={setToRevoke} />
      )}

      <ConfirmDialog
        open={toRevoke !== null}
        title="Revoke invite?"
        message={
          <p>
            {toRevoke?.email ? `The invite for ${toRevoke.email}` : `Invite #${toRevoke?.id}`} stops working at once.
            Accounts already made with it stay.
          </p>
        }
        confirmLabel="Revoke"
        danger
        busy={revoking}
        onConfirm={() => void confirmRevoke()}
        onCancel={() => setToRevoke(null)}
      />
    </div>
  );
}

function CreateInviteForm({ onCreated, onForbidden }: { onCreated: (i: TInvite) => void; onForbidden: () => void }) {
  const [send, setSend] = useState(false);
  const sendRef = useRef(send);
  sendRef.current = send;
  const form = useForm<keyof Values>({ uses: '1', days: '7', email: '' }, (values) =>
    validateInvite(values, sendRef.current),
  );
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<Created | null>(null);
  const sendId = useId();

  async function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (busy || !form.check()) return;
    setBusy(true);
    setError(null);
    const email = form.values.email.trim();
    const body = {
      max_uses: Number(form.values.uses.trim()),
      expires_in_days: form.values.days.trim() ? Number(form.values.days.trim()) : null,
    };
    try {
      if (send) {
        const sent = await sendInvite({ ...body, email });
        setCreated({ url: sent.signup_url, sentTo: sent.sent_to, boundTo: sent.invite.email });
        onCreated(sent.invite);
      } else {
        const made = await createInvite({ ...body, email: email || null });
        setCreated({ url: made.signup_url, sentTo: null, boundTo: made.invite.email });
        onCreated(made.invite);
      }
    } catch (err) {
      if (isForbidden(err)) return onForbidden();
      const fields = serverFieldErrors(err, ['max_uses', 'expires_in_days', 'email'] as const);
      form.showServerErrors({ uses: fields.max_uses, days: fields.expires_in_days, email: fields.email });
      const fieldless = err instanceof ApiError && err.code === 'validation_error' && Object.keys(fields).length;
      if (!fieldless) setError(serverMessage(err) ?? GENERIC_ERROR);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="card admin-create" aria-labelledby={`${sendId}-title`}>
      <h2 className="admin-section-title" id={`${sendId}-title`}>
        New invite
      </h2>
      <form className="admin-create-form" onSubmit={onSubmit} noValidate>
        <div className="admin-create-fields">
          <Field label="Uses" inputMode="numeric" {...form.field('uses')} hint="How many accounts it can make." />
          <Field
            label="Expires after (days)"
            inputMode="numeric"
            {...form.field('days')}
            hint="Empty: never expires."
          />
          <EmailField
            {...form.field('email')}
            hint={
              send
                ? 'The link goes to this address, and only it can sign up.'
                : 'Optional: only this address can use it.'
            }
          />
        </div>
        <div className="admin-create-actions">
          <div className="checkbox">
            <input id={sendId} type="checkbox" checked={send} onChange={(event) => setSend(event.target.checked)} />
            <label htmlFor={sendId}>Send the link by email</label>
          </div>
          <button type="submit" className="btn btn-primary" disabled={busy}>
            {busy ? 'Creating...' : send ? 'Create and Send' : 'Create Invite'}
          </button>
        </div>
        {error && (
          <div className="admin-banners">
            <Banner onDismiss={() => setError(null)}>{error}</Banner>
          </div>
        )}
      </form>
      {created && <NewLink created={created} onDismiss={() => setCreated(null)} />}
    </section>
  );
}

/** The new invite's link, shown once, with a Copy button. */
function NewLink({ created, onDismiss }: { created: Created; onDismiss: () => void }) {
  const [copied, setCopied] = useState<'idle' | 'copied' | 'failed'>('idle');
  const inputRef = useRef<HTMLInputElement>(null);
  const linkId = useId();

  useEffect(() => {
    if (copied !== 'copied') return;
    const timer = setTimeout(() => setCopied('idle'), 2500);
    return () => clearTimeout(timer);
  }, [copied]);

  // A new link starts uncopied.
  // biome-ignore lint/correctness/useExhaustiveDependencies: reset when the link changes
  useEffect(() => setCopied('idle'), [created.url]);

  async function copy() {
    try {
      await navigator.clipboard.writeText(created.url);
      setCopied('copied');
    } catch {
      // No clipboard (plain http, or refused): select the text so Ctrl+C copies it.
      inputRef.current?.select();
      setCopied('failed');
    }
  }

  return (
    <div className="admin-new-link" role="status">
      <p className="admin-new-link-title">
        {created.sentTo ? `Invite sent to ${created.sentTo}.` : 'Invite created.'}{' '}
        <span className="admin-new-link-note">
          {created.boundTo ? `Only ${created.boundTo} can use it. ` : ''}Copy the link now: it is not shown again.
        </span>
      </p>
      <div className="admin-new-link-row">
        <label htmlFor={linkId} className="visually-hidden">
          Invite link
        </label>
        <input
          ref={inputRef}
          id={linkId}
          className="input admin-link-input"
          readOnly
          value={created.url}
          onFocus={(event) => event.currentTarget.select()}
        />
        <button type="button" className="btn btn-secondary admin-copy" onClick={() => void copy()}>
          {copied === 'copied' ? 'Copied' : 'Copy'}
        </button>
        <button type="button" className="btn btn-ghost" onClick={onDismiss}>
          Done
        </button>
      </div>
      {copied === 'failed' && <p className="field-hint">Could not copy: the link is selected, press Ctrl+C (⌘C).</p>}
    </div>
  );
}

const STATUS_LABEL: Record<TInvite['status'], string> = {
  active: 'Active',
  expired: 'Expired',
  exhausted: 'Used up',
  revoked: 'Revoked',
};

function InviteTable({ invites, onRevoke }: { invites: TInvite[]; onRevoke: (i: TInvite) => void }) {
  return (
    <div className="admin-table-wrap">
      <table className="admin-table admin-invites-table">
        <thead>
          <tr>
            <th scope="col">Invite</th>
            <th scope="col">Status</th>
            <th scope="col">Uses</th>
            <th scope="col">Expires</th>
            <th scope="col">Used by</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {invites.map((invite) => (
            <tr key={invite.id} className={invite.status === 'active' ? '' : 'is-inactive'}>
              <th scope="row" className="admin-cell-main">
                <span className="admin-main-text">{invite.email ?? 'Anyone with the link'}</span>
                <span className="admin-sub-text">
                  #{invite.id} · created{' '}
                  <time dateTime={invite.created_at} title={localDateTime(invite.created_at)}>
                    {relativeTime(invite.created_at)}
                  </time>
                </span>
              </th>
              <td data-label="Status">
                <span className={`badge admin-status-${invite.status}`}>{STATUS_LABEL[invite.status]}</span>
              </td>
              <td data-label="Uses">
                {invite.uses} of {invite.max_uses ?? 'unlimited'}
              </td>
              <td data-label="Expires">
                {invite.expires_at ? (
                  <time dateTime={invite.expires_at} title={localDateTime(invite.expires_at)}>
                    {relativeTime(invite.expires_at)}
                  </time>
                ) : (
                  <span className="admin-none">Never</span>
                )}
              </td>
              <td data-label="Used by" className="admin-used-by">
                {invite.uses > 0 ? (
                  <div>
                    {invite.used_by.map((u) => (
                      <span key={`${u.email}-${u.used_at}`}>{u.email}</span>
                    ))}
                    {/* Uses whose accounts were deleted since: counted, with nobody left to name. */}
                    {invite.uses > invite.used_by.length && (
                      <span className="admin-none">{deletedAccounts(invite.uses - invite.used_by.length)}</span>
                    )}
                  </div>
                ) : (
                  <span className="admin-none">Nobody yet</span>
                )}
              </td>
              <td className="admin-actions">
                {invite.status === 'active' && (
                  <button
                    type="button"
                    className="btn btn-secondary btn-sm btn-danger-text"
                    aria-label={`Revoke invite #${invite.id}`}
                    onClick={() => onRevoke(invite)}
                  >
                    Revoke
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const deletedAccounts = (n: number) => (n === 1 ? 'An account since deleted' : `${n} accounts since deleted`);
