// The nav bar's account menu. Part of the app shell: it links into several features (Admin only for admins).
import { useEffect, useId, useRef, useState } from 'react';
import { Link } from 'react-router-dom';
import { useIsAdmin } from '../features/admin/use-is-admin.ts';
import { initialsOf, type SessionUser } from '../features/auth/auth-context.tsx';
import { PauseSwitch, useDailyMessagePause } from '../features/auth/daily-pause.tsx';
import { signOut } from '../features/auth/sign-out.ts';

export function UserMenu({ user }: { user: SessionUser }) {
  const [open, setOpen] = useState(false);
  const [signingOut, setSigningOut] = useState(false);
  const menuId = useId();
  const rootRef = useRef<HTMLDivElement>(null);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const pause = useDailyMessagePause();
  const { paused, loading, load } = pause;
  const requested = useRef(false);
  const isAdmin = useIsAdmin(user.id, open);

  useEffect(() => {
    if (!open) return;
    const onPointer = (event: MouseEvent) => {
      if (!rootRef.current?.contains(event.target as Node)) setOpen(false);
    };
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') {
        setOpen(false);
        buttonRef.current?.focus();
      }
    };
    // Focus leaving the menu closes it: tabbing out, or focus dropping to nothing (the focused item
    // went away, or Tab left the page). The window losing focus keeps it open: the item stays focused.
    let check: ReturnType<typeof setTimeout> | undefined;
    const onFocusOut = (event: FocusEvent) => {
      const next = event.relatedTarget as Node | null;
      if (next) {
        if (!rootRef.current?.contains(next)) setOpen(false);
        return;
      }
      clearTimeout(check);
      check = setTimeout(() => {
        if (!rootRef.current?.contains(document.activeElement)) setOpen(false);
      });
    };
    const root = rootRef.current;
    document.addEventListener('mousedown', onPointer);
    document.addEventListener('keydown', onKey);
    root?.addEventListener('focusout', onFocusOut);
    return () => {
      document.removeEventListener('mousedown', onPointer);
      document.removeEventListener('keydown', onKey);
      root?.removeEventListener('focusout', onFocusOut);
      clearTimeout(check);
    };
  }, [open]);

  // The setting is fetched the first time the menu opens (again on a later open if that failed).
  useEffect(() => {
    if (!open) {
      requested.current = false;
      return;
    }
    if (requested.current || paused !== null || loading) return;
    requested.current = true;
    void load();
  }, [open, paused, loading, load]);

  const close = () => setOpen(false);

  return (
    <div className="user-menu" ref={rootRef}>
      <button
        ref={buttonRef}
        type="button"
        className="avatar-button"
        // A disclosure (a panel of links and settings), not an ARIA menu: no aria-haspopup.
        aria-expanded={open}
        aria-controls={menuId}
        aria-label={`Account menu for ${user.email}`}
        onClick={() => setOpen((v) => !v)}
      >
        <span className="avatar" aria-hidden="true">
          {initialsOf(user.email)}
        </span>
      </button>
      {open && (
        // tabIndex -1: a click on the panel's text focuses the panel, which is still inside the menu.
        <div className="user-menu-panel" id={menuId} tabIndex={-1}>
          <Link to="/profile" className="user-menu-account" onClick={close}>
            <span className="user-menu-email" title={user.email}>
              {user.email}
            </span>
            <span className="user-menu-sub">Your account</span>
          </Link>
          <ul className="user-menu-list">
            <li>
              <Link to="/memories" onClick={close}>
                Memories
              </Link>
            </li>
            <li>
              <Link to="/resources" onClick={close}>
                History
              </Link>
            </li>
            <li>
              {/* A server-rendered page: a plain link, not a client route. */}
              <a href="/accounts/3rdparty/">Calendar Connections</a>
            </li>
            {isAdmin && (
              <li>
                <Link to="/admin" onClick={close}>
                  Admin
                </Link>
              </li>
            )}
          </ul>
          <div className="user-menu-section">
            <PauseSwitch paused={paused} onToggle={() => void pause.toggle()} className="switch-compact" />
            {pause.error && (
              <p className="user-menu-error" role="alert">
                {pause.error}
              </p>
            )}
          </div>
          <div className="user-menu-section">
            <button
              type="button"
              className="user-menu-signout"
              disabled={signingOut}
              onClick={() => {
                setSigningOut(true);
                void signOut();
              }}
            >
              {signingOut ? 'Signing out...' : 'Sign Out'}
            </button>
          </div>
        </div>
      )}
    </div>
  );
}
