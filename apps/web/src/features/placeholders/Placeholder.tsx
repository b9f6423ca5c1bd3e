import type { ReactNode } from 'react';
import { Link } from 'react-router-dom';

/** A screen whose feature is still being built: the route, guard and layout are already final. */
export function Placeholder({ title, subtitle, children }: { title: string; subtitle: string; children?: ReactNode }) {
  return (
    <div className="container page">
      <header className="page-header">
        <h1 className="page-title">{title}</h1>
        <p className="page-subtitle">{subtitle}</p>
      </header>
      <div className="card placeholder-card">
        <p>This part of Daybook is not available yet. It is coming in an upcoming release.</p>
        {children}
        <Link to="/" className="btn btn-secondary">
          Back to Home
        </Link>
      </div>
    </div>
  );
}
