import { logout } from './allauth.ts';

/** Ends the session, then reloads the app at / so no signed-in state survives in memory. */
export async function signOut(): Promise<void> {
  try {
    const res = await logout();
    if (res.status !== 401) console.error('Sign out answered', res.status);
  } catch (err) {
    console.error('Sign out failed', err);
  }
  window.location.assign('/');
}
