import type { ReactNode } from 'react';
import type { RouteObject } from 'react-router-dom';
import { CreatorRoute } from '../features/about/CreatorRoute.tsx';
import { HomePage } from '../features/home/HomePage.tsx';
import { NotFoundPage } from '../features/not-found/NotFoundPage.tsx';
import * as S from '../features/placeholders/screens.tsx';
import { Layout } from './Layout.tsx';
import { RouteGuard } from './RouteGuard.tsx';

const signedIn = (node: ReactNode) => <RouteGuard requireAuth>{node}</RouteGuard>;
const anonymous = (node: ReactNode) => <RouteGuard anonymousOnly>{node}</RouteGuard>;

/** Every route of the spec's route table. */
export const routes: RouteObject[] = [
  {
    element: <Layout />,
    children: [
      { path: '/', element: <HomePage /> },
      { path: '/auth/login', element: anonymous(<S.LoginScreen />) },
      { path: '/auth/signup', element: anonymous(<S.SignupScreen />) },
      { path: '/auth/resend-verification', element: anonymous(<S.ResendVerificationScreen />) },
      { path: '/auth/verify-email/:key', element: anonymous(<S.VerifyEmailScreen />) },
      { path: '/auth/forgot-password', element: anonymous(<S.ForgotPasswordScreen />) },
      { path: '/auth/change-password', element: signedIn(<S.ChangePasswordScreen />) },
      { path: '/chat', element: signedIn(<S.ChatScreen />) },
      { path: '/guest-tour', element: <S.GuestTourScreen /> },
      { path: '/demo-tour', element: signedIn(<S.DemoTourScreen />) },
      { path: '/onboarding', element: signedIn(<S.OnboardingScreen />) },
      { path: '/memories', element: signedIn(<S.MemoriesScreen />) },
      { path: '/resources', element: signedIn(<S.ResourcesScreen />) },
      { path: '/resources/daily-message/:id', element: signedIn(<S.DailyMessageScreen />) },
      { path: '/resources/research/:id', element: signedIn(<S.ResearchScreen />) },
      { path: '/accounts/3rdparty', element: signedIn(<S.CalendarConnectionsRedirect />) },
      { path: '/:slug', element: <CreatorRoute /> },
      { path: '*', element: <NotFoundPage /> },
    ],
  },
];
