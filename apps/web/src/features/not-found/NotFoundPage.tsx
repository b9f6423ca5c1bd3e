import { Link } from 'react-router-dom';
import { usePageTitle } from '../../lib/page-title.tsx';

export function NotFoundPage() {
  usePageTitle('Page Not Found');
  return (
    <div className="container page centered-page">
      <div className="card centered-card">
        <p className="big-code" aria-hidden="true">
          404
        </p>
        <h1>Page Not Found</h1>
        <p className="muted">The page you're looking for doesn't exist or has been moved.</p>
        <div className="button-row">
          <Link to="/" className="btn btn-primary">
            Go Home
          </Link>
          <Link to="/chat" className="btn btn-secondary">
            Try Chat
          </Link>
        </div>
      </div>
    </div>
  );
}
