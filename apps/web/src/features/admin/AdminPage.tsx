// /admin: administrators manage invites and accounts, check the model and see its usage, here. Others get a note
// that the area is for administrators (every admin call answers them 403).
import { type KeyboardEvent, useCallback, useId, useRef, useState } from 'react';
import { Link, useSearchParams } from 'react-router-dom';
import { InvitesPanel } from './InvitesPanel.tsx';
import { ModelPanel } from './ModelPanel.tsx';
import { UsagePanel } from './UsagePanel.tsx';
import { UsersPanel } from './UsersPanel.tsx';
import './admin.css';

const TABS = [
  { id: 'invites', label: 'Invites' },
  { id: 'users', label: 'Users' },
  { id: 'model', label: 'Model' },
  { id: 'usage', label: 'Usage' },
] as const;
type Tab = (typeof TABS)[number]['id'];

export function AdminPage() {
  const [params, setParams] = useSearchParams();
  const tab: Tab = TABS.find((t) => t.id === params.get('tab'))?.id ?? 'invites';
  const [forbidden, setForbidden] = useState(false);
  const onForbidden = useCallback(() => setForbidden(true), []);
  const baseId = useId();
  const tabRefs = useRef<Record<Tab, HTMLButtonElement | null>>({
    invites: null,
    users: null,
    model: null,
    usage: null,
  });

  const select = (next: Tab, focus = false) => {
    setParams(next === 'invites' ? {} : { tab: next }, { replace: true });
    if (focus) tabRefs.current[next]?.focus();
  };

  // Arrow keys, Home and End move between the tabs (the WAI-ARIA tabs pattern).
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const index = TABS.findIndex((t) => t.id === tab);
    const moves: Record<string, number> = {
      ArrowRight: index + 1,
      ArrowLeft: index - 1,
      Home: 0,
      End: TABS.length - 1,
    };
    const target = moves[event.key];
    if (target === undefined) return;
    event.preventDefault();
    const next = TABS[(target + TABS.length) % TABS.length];
    if (next) select(next.id, true);
  };

  if (forbidden) return <ForbiddenNote />;

  return (
    <div className="container page admin-page">
      <header className="page-header">
        <h1 className="page-title">Admin</h1>
        <p className="page-subtitle">
          Invite people to this Daybook, manage their accounts, check its model and see what the model spends.
        </p>
      </header>
      <div className="admin-tabs" role="tablist" aria-label="Admin sections" onKeyDown={onKeyDown}>
        {TABS.map((t) => (
          <button
            key={t.id}
            ref={(el) => {
              tabRefs.current[t.id] = el;
            }}
            type="button"
            role="tab"
            id={`${baseId}-tab-${t.id}`}
            aria-selected={tab === t.id}
            aria-controls={`${baseId}-panel-${t.id}`}
            tabIndex={tab === t.id ? 0 : -1}
            className="admin-tab"
            onClick={() => select(t.id)}
          >
            {t.label}
          </button>
        ))}
      </div>
      {/* All stay mounted, so a new link, a search or a check survives a look at another tab. */}
      {TABS.map((t) => (
        <section
          key={t.id}
          role="tabpanel"
          id={`${baseId}-panel-${t.id}`}
          aria-labelledby={`${baseId}-tab-${t.id}`}
          hidden={tab !== t.id}
          className="admin-panel"
        >
          {t.id === 'invites' && <InvitesPanel onForbidden={onForbidden} />}
          {t.id === 'users' && <UsersPanel onForbidden={onForbidden} active={tab === 'users'} />}
          {t.id === 'model' && <ModelPanel onForbidden={onForbidden} />}
          {t.id === 'usage' && <UsagePanel onForbidden={onForbidden} shown={tab === 'usage'} />}
        </section>
      ))}
    </div>
  );
}

export function ForbiddenNote() {
  return (
    <div className="container page centered-page">
      <div className="card centered-card">
        <p className="big-code" aria-hidden="true">
          403
        </p>
        <h1>Administrators Only</h1>
        <p className="muted">
          This area is for the people who run this Daybook. Ask an administrator if you need an invite for someone.
        </p>
        <div className="button-row">
          <Link to="/chat" className="btn btn-primary">
            Go to Chat
          </Link>
        </div>
      </div>
    </div>
  );
}
