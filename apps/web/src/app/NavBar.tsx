import { Link, NavLink, useLocation } from 'react-router-dom';
import { BrandMark } from '../components/BrandMark.tsx';
import { useAuth } from '../features/auth/auth-context.tsx';
import { UserMenu } from './UserMenu.tsx';

const TOUR_LABELS: Record<string, string> = { '/guest-tour': 'Guest Tour', '/demo-tour': 'Demo Tour' };

export function NavBar() {
  const { pathname } = useLocation();
  const { state } = useAuth();
  const signedIn = state.status === 'authenticated';
  const onHome = pathname === '/';
  const tourLabel = TOUR_LABELS[pathname];
  const inTour = tourLabel !== undefined;

  let tourLink: { to: string; label: string } | null = null;
  if (inTour) tourLink = { to: pathname, label: tourLabel };
  else if (onHome && state.status === 'anonymous') tourLink = { to: '/guest-tour', label: 'Take the Tour' };

  return (
    <header className="navbar">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <nav className="container navbar-inner" aria-label="Main">
        <Link to="/" className="brand" aria-label="Daybook home">
          <BrandMark />
          <span className="brand-name">Daybook</span>
        </Link>
        <ul className="nav-links">
          <li>
            <NavLink to="/" end className="nav-link">
              Home
            </NavLink>
          </li>
          {signedIn && !inTour && (
            <li>
              <NavLink to="/chat" className="nav-link">
                Chat
              </NavLink>
            </li>
          )}
          {tourLink && (
            <li>
              <NavLink to={tourLink.to} className="nav-link">
                {tourLink.label}
              </NavLink>
            </li>
          )}
          {state.status === 'anonymous' && (
            <li>
              {pathname === '/auth/login' ? (
                <Link to="/auth/signup" className="btn btn-primary btn-sm">
                  Sign Up
                </Link>
              ) : (
                <Link to="/auth/login" className="btn btn-primary btn-sm">
                  Sign In
                </Link>
              )}
            </li>
          )}
          {state.status === 'authenticated' && (
            <li>
              <UserMenu user={state.user} />
            </li>
          )}
        </ul>
      </nav>
    </header>
  );
}
