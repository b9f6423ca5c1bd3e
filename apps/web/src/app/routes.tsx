import { lazy, type ReactNode, Suspense, useEffect, useState } from 'react';
import { matchRoutes, type RouteObject } from 'react-router-dom';
import { Loading } from '../components/Loading.tsx';
import { LoginAlias } from '../features/auth/LoginAlias.tsx';
import { LoginPage } from '../features/auth/LoginPage.tsx';
import { ResendVerificationPage } from '../features/auth/ResendVerificationPage.tsx';
import { SignupPage } from '../features/auth/SignupPage.tsx';
import { HomePage } from '../features/home/HomePage.tsx';
import { NotFoundPage } from '../features/not-found/NotFoundPage.tsx';
import { Titled } from '../lib/page-title.tsx';
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
// Pages off the first screen (account settings, memories, the rarer auth steps, the creator's page)
// load when opened, keeping the first download within the 150 KB budget (scripts/web-size.ts).
const ProfilePage = lazy(() => import('../features/profile/ProfilePage.tsx').then((m) => ({ default: m.ProfilePage })));
const MemoriesPage = lazy(() =>
  import('../features/memories/MemoriesPage.tsx').then((m) => ({ default: m.MemoriesPage })),
);
const ChangePasswordPage = lazy(() =>
  import('../features/auth/ChangePasswordPage.tsx').then((m) => ({ default: m.ChangePasswordPage })),
);
const ForgotPasswordPage = lazy(() =>
  import('../features/auth/ForgotPasswordPage.tsx').then((m) => ({ default: m.ForgotPasswordPage })),
);
const ResetPasswordPage = lazy(() =>
  import('../features/auth/ResetPasswordPage.tsx').then((m) => ({ default: m.ResetPasswordPage })),
);
const VerifyEmailPage = lazy(() =>
  import('../features/auth/VerifyEmailPage.tsx').then((m) => ({ default: m.VerifyEmailPage })),
);
const AccountDeletedPage = lazy(() =>
  import('../features/account-data/AccountDeletedPage.tsx').then((m) => ({ default: m.AccountDeletedPage })),
);
const CalendarConnectionsRedirect = lazy(() =>
  import('../features/calendar/CalendarConnectionsRedirect.tsx').then((m) => ({
    default: m.CalendarConnectionsRedirect,
  })),
);
const CreatorRoute = lazy(() =>
  import('../features/about/CreatorRoute.tsx').then((m) => ({ default: m.CreatorRoute })),
);
/** A page of on-demand code has been painted once: the ones shown from then on ask for their code at once. */
let painted = false;
/** The longest a page waits for that first paint. */
const LATER_AT_MOST_MS = 100;

/**
 * A page whose code loads on demand. The first one (usually the page opened straight) asks for its
 * code once its first render has been painted: the nav bar and what the page already knows show
 * first, without the page's code competing with the app's own for the connection and the CPU.
 */
function Later({ children }: { children: ReactNode }) {
  const [ready, setReady] = useState(painted || typeof requestAnimationFrame === 'undefined');
  useEffect(() => {
    if (ready) return;
    const go = () => {
      painted = true;
      setReady(true);
    };
    let timer: ReturnType<typeof setTimeout> | undefined;
    // The frame after this commit, then the task after its paint. A tab in the background draws no
    // frames: there a short wait stands in, so its page is ready when the user comes to it.
    const frame = requestAnimationFrame(() => {
      clearTimeout(timer);
      timer = setTimeout(go, 0);
    });
    timer = setTimeout(go, LATER_AT_MOST_MS);
    return () => {
      cancelAnimationFrame(frame);
      clearTimeout(timer);
    };
  }, [ready]);
  return <Suspense fallback={<Loading />}>{ready ? children : <Loading />}</Suspense>;
}
const later = (node: ReactNode) => <Later>{node}</Later>;

/** The page's own document title (the about and not-found pages set theirs). */
const titled = (title: string, node: ReactNode) => <Titled title={title}>{node}</Titled>;

/** Marks the routes only signed-in users see. */
const SIGNED_IN = { signedIn: true };
const signedIn = (node: ReactNode) => ({ element: <RouteGuard requireAuth>{node}</RouteGuard>, handle: SIGNED_IN });
const anonymous = (node: ReactNode) => <RouteGuard anonymousOnly>{node}</RouteGuard>;

/** Every route of the spec's route table. */
export const routes: RouteObject[] = [
  {
    element: <Layout />,
    children: [
      { path: '/', element: titled('Home', <HomePage />) },
      { path: '/auth/login', element: anonymous(titled('Sign In', <LoginPage />)) },
      { path: '/auth/account-deleted', element: anonymous(titled('Account Deleted', later(<AccountDeletedPage />))) },
      { path: '/auth/signup', element: anonymous(titled('Create Account', <SignupPage />)) },
      {
        path: '/auth/resend-verification',
        element: anonymous(titled('Resend Verification Email', <ResendVerificationPage />)),
      },
      // Signed in or not: signup signs the new user in, and that user must still be able to verify.
      { path: '/auth/verify-email/:key', element: titled('Verify Email', later(<VerifyEmailPage />)) },
      { path: '/auth/verify-email', element: titled('Verify Email', later(<VerifyEmailPage />)) },
      { path: '/auth/forgot-password', element: anonymous(titled('Reset Password', later(<ForgotPasswordPage />))) },
      {
        path: '/auth/reset-password/:key',
        element: anonymous(titled('Choose a New Password', later(<ResetPasswordPage />))),
      },
      { path: '/auth/change-password', ...signedIn(titled('Change Password', later(<ChangePasswordPage />))) },
      { path: '/login', element: <LoginAlias /> },
      { path: '/profile', ...signedIn(titled('Your Account', later(<ProfilePage />))) },
      { path: '/chat', ...signedIn(titled('Chat', later(<ChatScreen />))) },
      { path: '/guest-tour', element: titled('Guest Tour', later(<GuestTourScreen />)) },
      { path: '/demo-tour', ...signedIn(titled('Demo Tour', later(<DemoTourScreen />))) },
      { path: '/onboarding', ...signedIn(titled('Onboarding', later(<OnboardingScreen />))) },
      { path: '/memories', ...signedIn(titled('Memories', later(<MemoriesPage />))) },
      { path: '/resources', ...signedIn(titled('Resources', later(<ResourcesPage />))) },
      { path: '/resources/daily-message/:id', ...signedIn(titled('Daily Message', later(<DailyMessagePage />))) },
      { path: '/resources/research/:id', ...signedIn(titled('Web Research Report', later(<ResearchPage />))) },
      {
        path: '/accounts/3rdparty',
        ...signedIn(titled('Calendar Connections', later(<CalendarConnectionsRedirect />))),
      },
      { path: '/admin', ...signedIn(titled('Admin', later(<AdminPage />))) },
      { path: '/:slug', element: later(<CreatorRoute />) },
      { path: '*', element: <NotFoundPage /> },
    ],
  },
];

/** Whether `pathname` is a page only signed-in users see (main.tsx asks for the account early there). */
export function signedInOnly(pathname: string): boolean {
  return matchRoutes(routes, pathname)?.some((match) => match.route.handle === SIGNED_IN) ?? false;
}
