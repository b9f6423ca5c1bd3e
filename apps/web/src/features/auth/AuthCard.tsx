// The centered card every account screen sits in, and the icon-led card of a finished step.
import { type ReactNode, useId } from 'react';
import { Link } from 'react-router-dom';
import { BrandMark } from '../../components/BrandMark.tsx';

export function AuthCard({
  title,
  subtitle,
  children,
  footer,
}: {
  title: string;
  subtitle?: ReactNode;
  children: ReactNode;
  footer?: ReactNode;
}) {
  const titleId = useId();
  return (
    <div className="container page centered-page auth-page">
      <section className="card auth-card" aria-labelledby={titleId}>
        <header className="auth-header">
          <BrandMark />
          <h1 id={titleId} className="auth-title">
            {title}
          </h1>
          {subtitle && <p className="auth-subtitle">{subtitle}</p>}
        </header>
        {children}
        {footer && <div className="auth-footer">{footer}</div>}
      </section>
    </div>
  );
}

export type StatusTone = 'success' | 'error' | 'info' | 'loading';

const ICONS: Record<Exclude<StatusTone, 'loading'>, ReactNode> = {
  success: <path d="M6 12.5l4 4 8-9" />,
  error: (
    <>
      <path d="M12 5.5v8.5" />
      <path d="M12 18.25v.25" />
    </>
  ),
  info: (
    <>
      <rect x="4" y="6" width="16" height="12" rx="2" />
      <path d="M4.5 7l7.5 6 7.5-6" />
    </>
  ),
};

/** A step's outcome: icon, title, text and what to do next. Errors are announced as alerts. */
export function StatusCard({
  tone,
  title,
  children,
  actions,
}: {
  tone: StatusTone;
  title: string;
  children?: ReactNode;
  actions?: ReactNode;
}) {
  return (
    <div className="container page centered-page auth-page">
      <section className={`card auth-card auth-status auth-status-${tone}`}>
        <div role={tone === 'error' ? 'alert' : 'status'} aria-live={tone === 'error' ? 'assertive' : 'polite'}>
          <span className="auth-status-icon" aria-hidden="true">
            {tone === 'loading' ? (
              <span className="spinner" />
            ) : (
              <svg viewBox="0 0 24 24" aria-hidden="true" focusable="false">
                {ICONS[tone]}
              </svg>
            )}
          </span>
          <h1 className="auth-title">{title}</h1>
          {children && <div className="auth-status-body">{children}</div>}
        </div>
        {actions && <div className="auth-actions">{actions}</div>}
      </section>
    </div>
  );
}

/** "Check Your Email" after a form mailed something, with the way back to sign in. */
export function CheckEmailCard({ backLabel, children }: { backLabel: string; children: ReactNode }) {
  return (
    <StatusCard
      tone="info"
      title="Check Your Email"
      actions={
        <Link to="/auth/login" className="btn btn-primary btn-block">
          {backLabel}
        </Link>
      }
    >
      {children}
    </StatusCard>
  );
}
