import type { ReactNode } from 'react';
import { Link } from 'react-router-dom';

/** A screen the app cannot show here: its title, what happened (`children`), and the way home. */
export function UnavailablePage({
  title,
  subtitle,
  children,
}: {
  title: string;
  subtitle: string;
  children?: ReactNode;
}) {
  return (
    <div className="container page">
      <header className="page-header">
        <h1 className="page-title">{title}</h1>
        <p className="page-subtitle">{subtitle}</p>
      </header>
      <div className="card unavailable-card">
        {children}
        <Link to="/" className="btn btn-secondary">
          Back to Home
        </Link>
      </div>
    </div>
  );
}
