// The assistant's task notifications ("Looking at your calendar..."): a short stack beside the list.
import { useCallback, useRef, useState } from 'react';
import type { Later } from './useLater.ts';

/** At most this many task notifications show at once. */
export const MAX_NOTIFICATIONS = 2;
/** A final notification stays this long, then fades out for NOTIFICATION_FADE_MS, then the stack clears. */
export const NOTIFICATION_HOLD_MS = 2_500;
export const NOTIFICATION_FADE_MS = 500;

export interface TaskNotification {
  id: number;
  text: string;
  final: boolean;
}

export function useTaskNotifications(later: Later) {
  const [notifications, setNotifications] = useState<TaskNotification[]>([]);
  const [fading, setFading] = useState(false);
  const nextId = useRef(0);
  const addNotification = useCallback(
    (text: string, final: boolean) => {
      const id = ++nextId.current;
      setNotifications((list) => [...list, { id, text, final }].slice(-MAX_NOTIFICATIONS));
      if (!final) return;
      later(() => {
        setFading(true);
        later(() => {
          setNotifications((list) => list.filter((n) => n.id > id));
          setFading(false);
        }, NOTIFICATION_FADE_MS);
      }, NOTIFICATION_HOLD_MS);
    },
    [later],
  );
  return { notifications, fading, addNotification };
}
