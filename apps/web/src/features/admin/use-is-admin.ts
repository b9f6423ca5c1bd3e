// Whether the signed-in user is an administrator, for the account menu's Admin link. Asked the first
// time `ask` is true (the menu opens), once per user while the menu stays mounted.
import { useEffect, useState } from 'react';
import { getMe } from '../auth/api.ts';

export function useIsAdmin(userId: number | string, ask: boolean): boolean {
  const user = String(userId);
  const [known, setKnown] = useState<{ user: string; isAdmin: boolean } | null>(null);
  const answered = known?.user === user;

  useEffect(() => {
    if (!ask || answered) return;
    const controller = new AbortController();
    getMe(controller.signal).then(
      (me) => setKnown({ user, isAdmin: me.is_admin }),
      () => {
        // No answer, no link: the admin page itself still works at /admin.
      },
    );
    return () => controller.abort();
  }, [ask, answered, user]);

  return answered && known.isAdmin;
}
