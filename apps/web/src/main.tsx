import './zod-setup.ts';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/App.tsx';
import { signedInOnly } from './app/routes.tsx';
import { ALLAUTH_BASE } from './features/auth/allauth.ts';
import { ACCOUNT_PATH } from './features/auth/api.ts';
import { type AuthState, fetchSession } from './features/auth/auth-context.tsx';
import { accountEarlySettled, checkAccountEarly } from './features/auth/email-verification.tsx';
import { hasBootAnswer } from './lib/boot.ts';
import { loadSiteEarly, type SiteState } from './lib/site.tsx';
import './styles/index.css';

// The page usually carries the answers to these (lib/boot.ts); then they are here within microtasks.
const carried = {
  session: hasBootAnswer(`${ALLAUTH_BASE}/auth/session`),
  account: hasBootAnswer(ACCOUNT_PATH),
};

// Asked while React starts, not after it has rendered (the providers take these answers): who is
// signed in and their account (once the session names a user, or at once on a signed-in page when
// the session must be asked too), and the site's details.
const session = fetchSession();
const account = session.then((state) => {
  if (state.status === 'authenticated') checkAccountEarly();
  return accountEarlySettled();
});
if (!carried.session && signedInOnly(window.location.pathname)) checkAccountEarly();
const site = loadSiteEarly();

const root = document.getElementById('root');
if (!root) throw new Error('#root is missing from index.html');

const render = (first?: [AuthState, SiteState | undefined, ...unknown[]]) =>
  createRoot(root).render(
    <StrictMode>
      <App initialAuth={first?.[0]} initialSite={first?.[1]} />
    </StrictMode>,
  );

// With the page's answers the first render starts from them, so a page appears whole (with its
// reminder) instead of after a "Loading" frame. Without them, the app renders at once and the
// providers wait for the server.
if (carried.session) {
  Promise.all([session, site, carried.account ? account : undefined]).then(render, () => render());
} else render();
