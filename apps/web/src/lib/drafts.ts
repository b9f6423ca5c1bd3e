// Unsent text kept in this tab's session storage, so a reload or a crash does not lose what the user
// typed. It belongs to the signed-in user: signing out, an expired session or another account
// clears it, so the next person at this browser never sees it.
const PREFIX = 'daybook.draft.';
const OWNER = 'daybook.draft-owner';

function storage(): Storage | null {
  try {
    return window.sessionStorage;
  } catch {
    // Storage can be switched off; drafts then live only as long as the page.
    return null;
  }
}

export function loadDraft(name: string): string {
  return storage()?.getItem(PREFIX + name) ?? '';
}

export function saveDraft(name: string, text: string) {
  try {
    if (text) storage()?.setItem(PREFIX + name, text);
    else storage()?.removeItem(PREFIX + name);
  } catch {
    // Full storage: the draft stays on screen, just not across a reload.
  }
}

export function clearDrafts() {
  const store = storage();
  if (!store) return;
  for (const key of Object.keys(store)) if (key.startsWith(PREFIX) || key === OWNER) store.removeItem(key);
}

/** Called whenever the session is learned: drafts survive only for the user who wrote them. */
export function claimDrafts(userId: string | number | null) {
  const store = storage();
  if (!store) return;
  const owner = userId === null ? null : String(userId);
  if (store.getItem(OWNER) === owner) return;
  clearDrafts();
  try {
    if (owner !== null) store.setItem(OWNER, owner);
  } catch {
    // Without storage room there are no drafts to protect either.
  }
}
