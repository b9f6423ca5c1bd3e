// The user's switches ("Pause daily messages", "Learn from my chats"), shared by the account menu and
// the profile page.
import { useCallback, useRef, useState } from 'react';
import { getMe, updateMe } from './api.ts';
import { useAuth } from './auth-context.tsx';

export const SETTINGS_UPDATE_FAILED = 'Failed to update user settings.';
export const SETTINGS_LOAD_FAILED = 'Failed to load user settings.';
export const NO_USER = 'No user logged in';

type SettingField = 'is_daily_message_paused' | 'learn_from_chats';

export function useDailyMessagePause() {
  const setting = useUserSetting('is_daily_message_paused');
  return { ...setting, paused: setting.value };
}

export function useUserSetting(field: SettingField) {
  const { state } = useAuth();
  const signedIn = state.status === 'authenticated';
  /** null until the current value is known. */
  const [value, setValue] = useState<boolean | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const saving = useRef(false);

  const load = useCallback(async () => {
    if (!signedIn) return setError(NO_USER);
    setLoading(true);
    setError(null);
    try {
      setValue((await getMe())[field]);
    } catch {
      setError(SETTINGS_LOAD_FAILED);
    } finally {
      setLoading(false);
    }
  }, [signedIn, field]);

  /** Flips the switch at once and saves; a failed save flips it back. */
  const toggle = useCallback(async () => {
    if (!signedIn) return setError(NO_USER);
    if (value === null || saving.current) return;
    const next = !value;
    saving.current = true;
    setValue(next);
    setError(null);
    try {
      setValue((await updateMe({ [field]: next }))[field]);
    } catch {
      setValue(!next);
      setError(SETTINGS_UPDATE_FAILED);
    } finally {
      saving.current = false;
    }
  }, [value, signedIn, field]);

  return { value, loading, error, load, toggle, receive: setValue };
}

export function PauseSwitch({
  paused,
  ...rest
}: {
  paused: boolean | null;
  onToggle: () => void;
  describedBy?: string;
  className?: string;
}) {
  return <SettingSwitch label="Pause daily messages" checked={paused} {...rest} />;
}

export function SettingSwitch({
  label,
  checked,
  onToggle,
  describedBy,
  className = '',
}: {
  label: string;
  checked: boolean | null;
  onToggle: () => void;
  describedBy?: string;
  className?: string;
}) {
  return (
    <button
      type="button"
      role="switch"
      className={`switch ${className}`.trim()}
      aria-checked={checked === true}
      aria-describedby={describedBy}
      disabled={checked === null}
      onClick={onToggle}
    >
      <span className="switch-label">{label}</span>
      <span className="switch-track" aria-hidden="true">
        <span className="switch-thumb" />
      </span>
    </button>
  );
}
