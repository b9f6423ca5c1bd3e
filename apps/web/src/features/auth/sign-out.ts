import { clearDrafts } from '../../lib/drafts.ts';
import { logout } from './allauth.ts';

/** Ends the session, then reloads the app at / so no signed-in state survives in memory or in the tab's storage. */
export async function signOut(): Promise<void> {
  try {
    const res = await logout();
    if (res.status !== 401) console.error('Sign out answered', res.status);
  } catch (err) {
    console.error('Sign out failed', err);
  }
  clearDrafts();
  window.location.assign('/');
}
