import { useCallback, useState } from 'react';
import { loadDraft, saveDraft } from '../../lib/drafts.ts';
import type { ChatChannel } from './api.ts';

/** The message box's text and its setter. */
export function useDraft(channel: ChatChannel) {
  // Kept across reloads of this tab: an outage or a crash never costs the user what they typed.
  const [draft, setDraftState] = useState(() => loadDraft(channel));
  const setDraft = useCallback(
    (text: string) => {
      setDraftState(text);
      saveDraft(channel, text);
    },
    [channel],
  );
  return [draft, setDraft] as const;
}
