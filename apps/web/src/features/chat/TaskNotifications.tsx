// The stack of task notifications beside the message list (never over it).
import type { TaskNotification } from './useTaskNotifications.ts';

export function TaskNotifications({ notifications, fading }: { notifications: TaskNotification[]; fading: boolean }) {
  if (notifications.length === 0) return null;
  return (
    <ul className={`chat-notifications${fading ? ' is-fading' : ''}`} aria-label="Assistant activity">
      {notifications.map((n) => (
        <li key={n.id} className={`chat-notification${n.final ? ' is-final' : ''}`}>
          {n.text}
        </li>
      ))}
    </ul>
  );
}
