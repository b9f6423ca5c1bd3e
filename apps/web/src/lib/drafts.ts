// Unsent text kept in this tab's session storage, so a reload or a crash does not lose what the user
// typed. Signing out clears it all: the next person at this browser must not see it.
const PREFIX = 'daybook.draft.';

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
  for (const key of Object.keys(store)) if (key.startsWith(PREFIX)) store.removeItem(key);
}
