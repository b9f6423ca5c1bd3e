import { createBrowserRouter, RouterProvider } from 'react-router-dom';
import { ErrorBoundary } from '../components/ErrorBoundary.tsx';
import { AuthProvider } from '../features/auth/auth-context.tsx';
import { SiteProvider } from '../lib/site.tsx';
import { routes } from './routes.tsx';

const router = createBrowserRouter(routes);

export function App() {
  return (
    <ErrorBoundary>
      <SiteProvider>
        <AuthProvider>
          <RouterProvider router={router} />
        </AuthProvider>
      </SiteProvider>
    </ErrorBoundary>
  );
}
