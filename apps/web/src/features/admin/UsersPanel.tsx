// Users: every account, newest first, with search and pages; deactivate or reactivate an account
// (deactivating signs it out everywhere at once) and make or unmake administrators.
import { ADMIN_USERS_PAGE_SIZE, type TAdminUser, type TAdminUserPage } from '@daybook/contracts';
import { useEffect, useId, useState } from 'react';
import { Banner } from '../../components/Banner.tsx';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { Loading } from '../../components/Loading.tsx';
import { Pagination } from '../../components/Pagination.tsx';
import { GENERIC_ERROR, serverMessage } from '../../lib/api.ts';
import { useAuth } from '../auth/auth-context.tsx';
import { isForbidden, listUsers, updateUser } from './api.ts';
import { localDate, localDateTime, relativeTime } from './format.ts';

export const USERS_LOAD_FAILED = 'Failed to load users. Please try again.';
const SEARCH_DEBOUNCE_MS = 300;

type Action = 'deactivate' | 'reactivate' | 'promote' | 'demote';

const ACTIONS: Record<
  Action,
  { label: string; title: string; body: (email: string) => string; patch: { is_active?: boolean; is_admin?: boolean } }
> = {
  deactivate: {
    label: 'Deactivate',
    title: 'Deactivate account?',
    body: (email) =>
      `${email} is signed out everywhere at once and cannot sign in until the account is reactivated. Nothing is deleted.`,
    patch: { is_active: false },
  },
  reactivate: {
    label: 'Reactivate',
    title: 'Reactivate account?',
    body: (email) => `${email} can sign in again.`,
    patch: { is_active: true },
  },
  promote: {
    label: 'Make administrator',
    title: 'Make administrator?',
    body: (email) => `${email} can then invite people and manage every account here, including yours.`,
    patch: { is_admin: true },
  },
  demote: {
    label: 'Remove administrator',
    title: 'Remove administrator?',
    body: (email) => `${email} keeps the account but can no longer use the admin area.`,
    patch: { is_admin: false },
  },
};

export function UsersPanel({ onForbidden, active }: { onForbidden: () => void; active: boolean }) {
  const { state } = useAuth();
  const me = state.status === 'authenticated' ? String(state.user.id) : null;
  const [page, setPage] = useState(1);
  const [search, setSearch] = useState('');
  const [text, setText] = useState('');
  const [data, setData] = useState<TAdminUserPage | null>(null);
  const [loading, setLoading] = useState(false);
  const [loadFailed, setLoadFailed] = useState(false);
  const [reloads, setReloads] = useState(0);
  const [pending, setPending] = useState<{ user: TAdminUser; action: Action } | null>(null);
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<{ variant: 'error' | 'success'; text: string } | null>(null);
  const [shown, setShown] = useState(false);
  const searchId = useId();

  if (active && !shown) setShown(true);

  // Searching waits for a pause in typing.
  useEffect(() => {
    if (text.trim() === search) return;
    const timer = setTimeout(() => {
      setSearch(text.trim());
      setPage(1);
    }, SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [text, search]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: `reloads` asks again (Retry)
  useEffect(() => {
    if (!shown) return;
    const controller = new AbortController();
    setLoading(true);
    setLoadFailed(false);
    listUsers({ page, search }, controller.signal).then(
      (result) => {
        setData(result);
        setLoading(false);
      },
      (err: unknown) => {
        if ((err as Error).name === 'AbortError') return;
        setLoading(false);
        if (isForbidden(err)) onForbidden();
        else setLoadFailed(true);
      },
    );
    return () => controller.abort();
  }, [shown, page, search, onForbidden, reloads]);

  async function confirm() {
    if (!pending) return;
    setBusy(true);
    try {
      const updated = await updateUser(pending.user.id, ACTIONS[pending.action].patch);
      setData(
        (current) =>
          current && { ...current, results: current.results.map((u) => (u.id === updated.id ? updated : u)) },
      );
      setNotice({ variant: 'success', text: doneText(pending.action, updated.email) });
    } catch (err) {
      if (isForbidden(err)) onForbidden();
      setNotice({ variant: 'error', text: serverMessage(err) ?? GENERIC_ERROR });
    }
    setBusy(false);
    setPending(null);
  }

  const totalPages = data ? Math.max(1, Math.ceil(data.count / ADMIN_USERS_PAGE_SIZE)) : 1;

  return (
    <div className="admin-users">
      <div className="admin-toolbar">
        <div className="admin-search">
          <label htmlFor={searchId} className="visually-hidden">
            Search users by email
          </label>
          <input
            id={searchId}
            className="input"
            type="search"
            placeholder="Search by email"
            value={text}
            maxLength={254}
            autoComplete="off"
            onChange={(event) => setText(event.target.value)}
            onKeyDown={(event) => {
              if (event.key === 'Enter') {
                setSearch(text.trim());
                setPage(1);
              }
            }}
          />
        </div>
        <p className="admin-count" aria-live="polite">
          {data ? (data.count === 1 ? '1 account' : `${data.count} accounts`) : ''}
        </p>
      </div>
      {(notice || loadFailed) && (
        <div className="admin-banners">
          {loadFailed && (
            <Banner
              action={
                <button type="button" className="btn btn-secondary btn-sm" onClick={() => setReloads((n) => n + 1)}>
                  Retry
                </button>
              }
            >
              {USERS_LOAD_FAILED}
            </Banner>
          )}
          {notice && (
            <Banner variant={notice.variant} onDismiss={() => setNotice(null)}>
              {notice.text}
            </Banner>
          )}
        </div>
      )}
      {data === null ? (
        loading && <Loading label="Loading users..." />
      ) : data.results.length === 0 ? (
        <div className="card admin-empty">
          <p>{search ? `No account matches "${search}".` : 'No accounts yet.'}</p>
        </div>
      ) : (
        <div className="admin-table-wrap" aria-busy={loading || undefined}>
          <table className="admin-table admin-users-table">
            <thead>
              <tr>
                <th scope="col">Account</th>
                <th scope="col">Joined</th>
                <th scope="col">Last sign-in</th>
                <th scope="col">Status</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {data.results.map((user) => (
                <UserRow
                  key={user.id}
                  user={user}
                  isMe={String(user.id) === me}
                  onAction={(action) => setPending({ user, action })}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pagination page={page} totalPages={totalPages} onChange={setPage} label="User pages" />

      <ConfirmDialog
        open={pending !== null}
        title={pending ? ACTIONS[pending.action].title : ''}
        message={<p>{pending ? ACTIONS[pending.action].body(pending.user.email) : ''}</p>}
        confirmLabel={pending ? ACTIONS[pending.action].label : 'Confirm'}
        danger={pending?.action === 'deactivate' || pending?.action === 'demote'}
        busy={busy}
        onConfirm={() => void confirm()}
        onCancel={() => setPending(null)}
      />
    </div>
  );
}

function doneText(action: Action, email: string) {
  if (action === 'deactivate') return `${email} is deactivated and signed out.`;
  if (action === 'reactivate') return `${email} can sign in again.`;
  if (action === 'promote') return `${email} is now an administrator.`;
  return `${email} is no longer an administrator.`;
}

function UserRow({ user, isMe, onAction }: { user: TAdminUser; isMe: boolean; onAction: (a: Action) => void }) {
  return (
    <tr className={user.is_active ? '' : 'is-inactive'}>
      <th scope="row" className="admin-cell-main">
        <span className="admin-main-text">{user.email}</span>
        <span className="admin-badges">
          {isMe && <span className="badge badge-muted">You</span>}
          {user.is_admin && <span className="badge admin-badge-admin">Administrator</span>}
          {!user.email_verified && <span className="badge badge-warning">Unverified</span>}
        </span>
      </th>
      <td data-label="Joined">
        <time dateTime={user.date_joined} title={localDateTime(user.date_joined)}>
          {localDate(user.date_joined)}
        </time>
      </td>
      <td data-label="Last sign-in">
        {user.last_login ? (
          <time dateTime={user.last_login} title={localDateTime(user.last_login)}>
            {relativeTime(user.last_login)}
          </time>
        ) : (
          <span className="admin-none">Never</span>
        )}
      </td>
      <td data-label="Status">
        <span className={`badge ${user.is_active ? 'badge-success' : 'admin-status-revoked'}`}>
          {user.is_active ? 'Active' : 'Deactivated'}
        </span>
      </td>
      <td className="admin-actions">
        {isMe ? (
          <span className="admin-none admin-self-note">This is you</span>
        ) : (
          <div className="admin-action-buttons">
            <button
              type="button"
              className="btn btn-secondary btn-sm"
              aria-label={`${user.is_admin ? 'Remove administrator' : 'Make administrator'}: ${user.email}`}
              onClick={() => onAction(user.is_admin ? 'demote' : 'promote')}
            >
              {user.is_admin ? 'Remove administrator' : 'Make administrator'}
            </button>
            <button
              type="button"
              className={`btn btn-secondary btn-sm ${user.is_active ? 'btn-danger-text' : ''}`}
              aria-label={`${user.is_active ? 'Deactivate' : 'Reactivate'} ${user.email}`}
              onClick={() => onAction(user.is_active ? 'deactivate' : 'reactivate')}
            >
              {user.is_active ? 'Deactivate' : 'Reactivate'}
            </button>
          </div>
        )}
      </td>
    </tr>
  );
}
