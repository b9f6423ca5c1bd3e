import { BrowserRouter, useRoutes } from 'react-router-dom';
import { ErrorBoundary } from '../components/ErrorBoundary.tsx';
import { AuthProvider } from '../features/auth/auth-context.tsx';
import { SiteProvider } from '../lib/site.tsx';
import { routes } from './routes.tsx';

// A plain BrowserRouter: the app uses no loaders or actions, and the data router's code is ~10 KB gzip.
function AppRoutes() {
  return useRoutes(routes);
}

export function App() {
  return (
    <ErrorBoundary>
      <SiteProvider>
        <AuthProvider>
          <BrowserRouter>
            <AppRoutes />
          </BrowserRouter>
        </AuthProvider>
      </SiteProvider>
    </ErrorBoundary>
  );
}
