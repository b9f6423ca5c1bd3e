import { BrowserRouter, useRoutes } from 'react-router-dom';
import { ErrorBoundary } from '../components/ErrorBoundary.tsx';
import { AuthProvider, type AuthState } from '../features/auth/auth-context.tsx';
import { SiteProvider, type SiteState } from '../lib/site.tsx';
import { routes } from './routes.tsx';

function Routes() {
  return useRoutes(routes);
}

/**
 * The whole app. A declarative router (not the data router, whose loaders and actions the app does not
 * use): its code is a third of the data router's, in the first download every page waits for.
 */
export function App({ initialAuth, initialSite }: { initialAuth?: AuthState; initialSite?: SiteState }) {
  return (
    <ErrorBoundary>
      <SiteProvider initial={initialSite}>
        <AuthProvider initial={initialAuth}>
          <BrowserRouter>
            <Routes />
          </BrowserRouter>
        </AuthProvider>
      </SiteProvider>
    </ErrorBoundary>
  );
}
