// The "Pause daily messages" setting, shared by the account menu and the profile page.
import { useCallback, useRef, useState } from 'react';
import { getMe, updateMe } from './api.ts';
import { useAuth } from './auth-context.tsx';

export const SETTINGS_UPDATE_FAILED = 'Failed to update user settings.';
export const SETTINGS_LOAD_FAILED = 'Failed to load user settings.';
export const NO_USER = 'No user logged in';

export function useDailyMessagePause() {
  const { state } = useAuth();
  const signedIn = state.status === 'authenticated';
  /** null until the current value is known. */
  const [paused, setPaused] = useState<boolean | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const saving = useRef(false);

  const load = useCallback(async () => {
    if (!signedIn) return setError(NO_USER);
    setLoading(true);
    setError(null);
    try {
      setPaused((await getMe()).is_daily_message_paused);
    } catch {
      setError(SETTINGS_LOAD_FAILED);
    } finally {
      setLoading(false);
    }
  }, [signedIn]);

  /** Flips the switch at once and saves; a failed save flips it back. */
  const toggle = useCallback(async () => {
    if (!signedIn) return setError(NO_USER);
    if (paused === null || saving.current) return;
    const next = !paused;
    saving.current = true;
    setPaused(next);
    setError(null);
    try {
      setPaused((await updateMe({ is_daily_message_paused: next })).is_daily_message_paused);
    } catch {
      setPaused(!next);
      setError(SETTINGS_UPDATE_FAILED);
    } finally {
      saving.current = false;
    }
  }, [paused, signedIn]);

  return { paused, loading, error, load, toggle, receive: setPaused };
}

export function PauseSwitch({
  paused,
  onToggle,
  describedBy,
  className = '',
}: {
  paused: boolean | null;
  onToggle: () => void;
  describedBy?: string;
  className?: string;
}) {
  return (
    <button
      type="button"
      role="switch"
      className={`switch ${className}`.trim()}
      aria-checked={paused === true}
      aria-describedby={describedBy}
      disabled={paused === null}
      onClick={onToggle}
    >
      <span className="switch-label">Pause daily messages</span>
      <span className="switch-track" aria-hidden="true">
        <span className="switch-thumb" />
      </span>
    </button>
  );
}
