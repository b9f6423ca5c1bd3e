import { useEffect, useId, useRef, useState } from 'react';
import { Link } from 'react-router-dom';
import { initialsOf, type SessionUser } from './auth-context.tsx';

export function UserMenu({ user }: { user: SessionUser }) {
  const [open, setOpen] = useState(false);
  const menuId = useId();
  const rootRef = useRef<HTMLDivElement>(null);
  const buttonRef = useRef<HTMLButtonElement>(null);

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
    document.addEventListener('mousedown', onPointer);
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('mousedown', onPointer);
      document.removeEventListener('keydown', onKey);
    };
  }, [open]);

  const close = () => setOpen(false);

  return (
    <div className="user-menu" ref={rootRef}>
      <button
        ref={buttonRef}
        type="button"
        className="avatar-button"
        aria-haspopup="true"
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
        <div className="user-menu-panel" id={menuId}>
          <p className="user-menu-email" title={user.email}>
            {user.email}
          </p>
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
          </ul>
        </div>
      )}
    </div>
  );
}
