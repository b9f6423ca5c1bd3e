// A redirect event. The chat follows it at once; in onboarding it is the end: the closing message
// stays on screen with a notice, and the page goes on after a pause or from the notice's button.
import { useCallback, useRef, useState } from 'react';
import { useNavigate } from 'react-router-dom';
import { safeHref } from '../../components/Markdown.tsx';
import type { ChatChannel } from './api.ts';
import type { Later } from './useLater.ts';

/** After onboarding's closing message, the chat waits this long before going on, so it can be read. */
export const ONBOARDING_REDIRECT_MS = 2_500;

export function useRedirect(channel: ChatChannel, later: Later) {
  const navigate = useNavigate();
  const go = useCallback(
    (target: string) => {
      if (target.startsWith('/') && !target.startsWith('//')) navigate(target);
      else if (/^https?:/i.test(target) && safeHref(target)) window.location.assign(target);
    },
    [navigate],
  );
  /** Where onboarding sends the user once its closing message has been read; null before that. */
  const [finishTarget, setFinishTarget] = useState<string | null>(null);
  // Onboarding ends with a notice and leaves after a pause (or at once from its button), only once.
  const finishing = useRef<string | null>(null);
  const leftOnboarding = useRef(false);
  const finishOnboarding = useCallback(() => {
    const target = finishing.current;
    if (target === null || leftOnboarding.current) return;
    leftOnboarding.current = true;
    go(target);
  }, [go]);

  /** Follows a redirect to `target`; true when it began the end of onboarding (no reply follows it). */
  const followRedirect = (target: string) => {
    if (channel !== 'onboarding') {
      go(target);
      return false;
    }
    // The end of onboarding: leave the closing message on screen for a moment.
    if (finishing.current !== null) return false;
    finishing.current = target;
    setFinishTarget(target);
    later(finishOnboarding, ONBOARDING_REDIRECT_MS);
    return true;
  };
  return { finishTarget, finishOnboarding, followRedirect };
}
