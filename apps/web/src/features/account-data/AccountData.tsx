// The profile page's "Download my data" row and its "Delete account" danger zone.
import { ACCOUNT_DATA_MESSAGES } from '@daybook/contracts';
import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { Link } from 'react-router-dom';
import { Field, FormError, useForm } from '../../components/form.tsx';
import { Modal } from '../../components/Modal.tsx';
import { serverFieldErrors, serverMessage } from '../../lib/api.ts';
import { clearDrafts } from '../../lib/drafts.ts';
import { deleteAccount, fetchExport, saveFile } from './api.ts';
import './account-data.css';

/** Where the browser goes once the account is gone (a full load: nothing signed-in survives). */
export const ACCOUNT_DELETED_PATH = '/auth/account-deleted';

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

type DownloadState =
  | { kind: 'idle' }
  | { kind: 'busy'; bytes: number }
  | { kind: 'done'; filename: string; bytes: number }
  | { kind: 'failed'; message: string };

export function DownloadDataRow() {
  const [state, setState] = useState<DownloadState>({ kind: 'idle' });
  const controller = useRef<AbortController | null>(null);
  const statusId = useId();
  useEffect(() => () => controller.current?.abort(), []);

  async function download() {
    controller.current?.abort();
    const current = new AbortController();
    controller.current = current;
    setState({ kind: 'busy', bytes: 0 });
    try {
      const { blob, filename } = await fetchExport((bytes) => setState({ kind: 'busy', bytes }), current.signal);
      saveFile(blob, filename);
      setState({ kind: 'done', filename, bytes: blob.size });
    } catch (err) {
      if ((err as Error).name === 'AbortError') return;
      setState({ kind: 'failed', message: serverMessage(err) ?? ACCOUNT_DATA_MESSAGES.exportFailed });
    }
  }

  const busy = state.kind === 'busy';
  return (
    <div className="account-action-row account-data-row">
      <div>
        <p className="account-action-title">Download my data</p>
        <p className="muted account-action-text">
          Your account, settings, memories, chats, daily messages, research reports, calendar connections and what the
          assistant model spent for you, as one JSON file. Calendar access tokens and private calendar addresses are
          left out.
        </p>
        <div id={statusId} className="account-data-status" role="status" aria-live="polite">
          {state.kind === 'busy' && (
            <span className="account-data-progress">
              <span className="spinner" aria-hidden="true" />
              {state.bytes ? `Downloading... ${formatBytes(state.bytes)}` : 'Preparing your file...'}
            </span>
          )}
          {state.kind === 'done' && (
            <span className="account-data-done">
              Downloaded {state.filename} ({formatBytes(state.bytes)}).
            </span>
          )}
        </div>
        {state.kind === 'failed' && (
          <p className="field-error" role="alert">
            {state.message}
          </p>
        )}
      </div>
      <button
        type="button"
        className="btn btn-secondary btn-sm"
        onClick={() => void download()}
        disabled={busy}
        aria-describedby={statusId}
      >
        {busy ? 'Downloading...' : 'Download my data'}
      </button>
    </div>
  );
}

export function DeleteAccountSection({ hasPassword }: { hasPassword: boolean }) {
  const [open, setOpen] = useState(false);
  const titleId = useId();
  return (
    <section className="card account-section account-danger" aria-labelledby={titleId}>
      <h2 id={titleId} className="account-section-title">
        Danger zone
      </h2>
      <div className="account-action-row">
        <div>
          <p className="account-action-title">Delete account</p>
          <p className="muted account-action-text">
            Permanently delete your account and everything in it. This cannot be undone.
          </p>
        </div>
        <button type="button" className="btn btn-danger btn-sm" onClick={() => setOpen(true)}>
          Delete account
        </button>
      </div>
      {/* Mounted while open, so a second opening starts with an empty password. */}
      {open && <DeleteAccountDialog onClose={() => setOpen(false)} hasPassword={hasPassword} />}
    </section>
  );
}

const validate = ({ password }: { password: string }) =>
  password ? {} : { password: ACCOUNT_DATA_MESSAGES.passwordRequired };

export function DeleteAccountDialog({
  onClose,
  hasPassword,
  onDeleted = () => window.location.assign(ACCOUNT_DELETED_PATH),
}: {
  onClose: () => void;
  hasPassword: boolean;
  /** After the account is gone; by default a full load of the page that says so. */
  onDeleted?: () => void;
}) {
  const form = useForm({ password: '' }, validate);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const listId = useId();

  async function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (busy || !form.check()) return;
    setBusy(true);
    setProblem(null);
    try {
      await deleteAccount(form.values.password);
      clearDrafts();
      onDeleted();
    } catch (err) {
      setBusy(false);
      const fields = serverFieldErrors(err, ['password'] as const);
      if (fields.password) form.showServerErrors(fields);
      else setProblem(serverMessage(err) ?? ACCOUNT_DATA_MESSAGES.deleteFailed);
    }
  }

  return (
    <Modal open onClose={onClose} title="Delete your account?" disableClose={busy} role="alertdialog">
      <div className="delete-account">
        <p id={listId}>This permanently deletes your Daybook account and everything in it:</p>
        <ul className="delete-account-list" aria-labelledby={listId}>
          <li>memories, including deleted ones</li>
          <li>chats and the onboarding conversation</li>
          <li>daily messages and research reports</li>
          <li>calendar connections (Google access is revoked)</li>
          <li>settings and email addresses</li>
        </ul>
        <p>
          You will be signed out on every device. This cannot be undone, so download your data first if you want to keep
          a copy.
        </p>
        {problem && <FormError>{problem}</FormError>}
        {hasPassword ? (
          <form noValidate onSubmit={onSubmit}>
            <Field
              {...form.field('password')}
              label="Enter your password to confirm"
              type="password"
              autoComplete="current-password"
              readOnly={busy}
            />
            <div className="modal-actions">
              <button type="button" className="btn btn-secondary" onClick={onClose} disabled={busy}>
                Cancel
              </button>
              <button type="submit" className="btn btn-danger" disabled={busy}>
                {busy ? 'Deleting...' : 'Delete my account'}
              </button>
            </div>
          </form>
        ) : (
          <>
            <p className="auth-notice">{ACCOUNT_DATA_MESSAGES.noPassword}</p>
            <div className="modal-actions">
              <button type="button" className="btn btn-secondary" onClick={onClose}>
                Cancel
              </button>
              <Link to="/auth/change-password" className="btn btn-primary">
                Set a password
              </Link>
            </div>
          </>
        )}
      </div>
    </Modal>
  );
}
