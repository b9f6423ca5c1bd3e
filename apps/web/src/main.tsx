import './zod-setup.ts';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/App.tsx';
import { signedInOnly } from './app/routes.tsx';
import { getSession } from './features/auth/allauth.ts';
import { checkAccountEarly } from './features/auth/email-verification.tsx';
import { loadSiteEarly } from './lib/site.tsx';
import './styles/index.css';

// Asked while React starts, not after it has rendered (the providers take these answers): who is
// signed in and their account (at once on a signed-in page, else once the session names a user),
// and the site's details.
getSession().then((user) => user && checkAccountEarly());
if (signedInOnly(window.location.pathname)) checkAccountEarly();
loadSiteEarly();

const root = document.getElementById('root');
if (!root) throw new Error('#root is missing from index.html');
createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
