import { lazy, type ReactNode, Suspense } from 'react';
import type { RouteObject } from 'react-router-dom';
import { Loading } from '../components/Loading.tsx';
import { CreatorRoute } from '../features/about/CreatorRoute.tsx';
import { AccountDeletedPage } from '../features/account-data/AccountDeletedPage.tsx';
import { ChangePasswordPage } from '../features/auth/ChangePasswordPage.tsx';
import { ForgotPasswordPage } from '../features/auth/ForgotPasswordPage.tsx';
import { LoginAlias } from '../features/auth/LoginAlias.tsx';
import { LoginPage } from '../features/auth/LoginPage.tsx';
import { ProfilePage } from '../features/auth/ProfilePage.tsx';
import { ResendVerificationPage } from '../features/auth/ResendVerificationPage.tsx';
import { ResetPasswordPage } from '../features/auth/ResetPasswordPage.tsx';
import { SignupPage } from '../features/auth/SignupPage.tsx';
import { VerifyEmailPage } from '../features/auth/VerifyEmailPage.tsx';
import { CalendarConnectionsRedirect } from '../features/calendar/CalendarConnectionsRedirect.tsx';
import { HomePage } from '../features/home/HomePage.tsx';
import { MemoriesPage } from '../features/memories/MemoriesPage.tsx';
import { NotFoundPage } from '../features/not-found/NotFoundPage.tsx';
import { Layout } from './Layout.tsx';
import { RouteGuard } from './RouteGuard.tsx';

// The chat (socket, markdown) loads on first visit, keeping the first page small.
const chat = () => import('../features/chat/ChatView.tsx');
const ChatScreen = lazy(() => chat().then((m) => ({ default: m.ChatScreen })));
const OnboardingScreen = lazy(() => chat().then((m) => ({ default: m.OnboardingScreen })));
// The tour shares the chat's message rendering, so it loads on demand as well.
const tour = () => import('../features/tour/TourPage.tsx');
const GuestTourScreen = lazy(() => tour().then((m) => ({ default: m.GuestTourScreen })));
const DemoTourScreen = lazy(() => tour().then((m) => ({ default: m.DemoTourScreen })));
// A report page renders markdown, which the chat loads on demand too.
// The history pages load when opened: they are not part of the first screen.
const ResourcesPage = lazy(() =>
  import('../features/resources/ResourcesPage.tsx').then((m) => ({ default: m.ResourcesPage })),
);
const ResearchPage = lazy(() =>
  import('../features/research/ResearchPage.tsx').then((m) => ({ default: m.ResearchPage })),
);
const DailyMessagePage = lazy(() =>
  import('../features/daily/DailyMessagePage.tsx').then((m) => ({ default: m.DailyMessagePage })),
);
const AdminPage = lazy(() => import('../features/admin/AdminPage.tsx').then((m) => ({ default: m.AdminPage })));
const later = (node: ReactNode) => <Suspense fallback={<Loading />}>{node}</Suspense>;

const signedIn = (node: ReactNode) => <RouteGuard requireAuth>{node}</RouteGuard>;
const anonymous = (node: ReactNode) => <RouteGuard anonymousOnly>{node}</RouteGuard>;

/** Every route of the spec's route table. */
export const routes: RouteObject[] = [
  {
    element: <Layout />,
    children: [
      { path: '/', element: <HomePage /> },
      { path: '/auth/login', element: anonymous(<LoginPage />) },
      { path: '/auth/account-deleted', element: anonymous(<AccountDeletedPage />) },
      { path: '/auth/signup', element: anonymous(<SignupPage />) },
      { path: '/auth/resend-verification', element: anonymous(<ResendVerificationPage />) },
      // Signed in or not: signup signs the new user in, and that user must still be able to verify.
      { path: '/auth/verify-email/:key', element: <VerifyEmailPage /> },
      { path: '/auth/verify-email', element: <VerifyEmailPage /> },
      { path: '/auth/forgot-password', element: anonymous(<ForgotPasswordPage />) },
      { path: '/auth/reset-password/:key', element: anonymous(<ResetPasswordPage />) },
      { path: '/auth/change-password', element: signedIn(<ChangePasswordPage />) },
      { path: '/login', element: <LoginAlias /> },
      { path: '/profile', element: signedIn(<ProfilePage />) },
      { path: '/chat', element: signedIn(later(<ChatScreen />)) },
      { path: '/guest-tour', element: later(<GuestTourScreen />) },
      { path: '/demo-tour', element: signedIn(later(<DemoTourScreen />)) },
      { path: '/onboarding', element: signedIn(later(<OnboardingScreen />)) },
      { path: '/memories', element: signedIn(<MemoriesPage />) },
      { path: '/resources', element: signedIn(later(<ResourcesPage />)) },
      { path: '/resources/daily-message/:id', element: signedIn(later(<DailyMessagePage />)) },
      { path: '/resources/research/:id', element: signedIn(later(<ResearchPage />)) },
      { path: '/accounts/3rdparty', element: signedIn(<CalendarConnectionsRedirect />) },
      { path: '/admin', element: signedIn(later(<AdminPage />)) },
      { path: '/:slug', element: <CreatorRoute /> },
      { path: '*', element: <NotFoundPage /> },
    ],
  },
];
