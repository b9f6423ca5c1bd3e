// What other modules may use of accounts: the signed-in user's row, the session operations for
// routes that sign a user out or name the cookie, and the password check a destructive action asks for.
export type { UserRow } from './accounts.repo.ts';
export { verifyPassword } from './passwords.ts';
export { endSession, SESSION_COOKIE } from './session.plugin.ts';
