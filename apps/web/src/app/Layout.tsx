import { Outlet, useLocation } from 'react-router-dom';
import { ErrorBoundary } from '../components/ErrorBoundary.tsx';
import { Footer } from '../components/Footer.tsx';
import { EmailVerificationProvider, VerifyEmailReminder } from '../features/auth/email-verification.tsx';
import { PageAnnouncer } from '../lib/page-title.tsx';
import { NavBar } from './NavBar.tsx';

export function Layout() {
  const { pathname } = useLocation();
  return (
    <EmailVerificationProvider>
      <NavBar />
      <VerifyEmailReminder />
      <main id="main" className="app-main" tabIndex={-1}>
        {/* Keyed by path so an error on one page does not stick to the next. */}
        <ErrorBoundary key={pathname}>
          <Outlet />
        </ErrorBoundary>
      </main>
      <Footer />
      <PageAnnouncer />
    </EmailVerificationProvider>
  );
}
