// What other modules may change of a user's row. Accounts owns `users`: onboarding, daily messages,
// administration and account deletion ask here instead of writing the table themselves.
import type { Tx } from '../../db/database.ts';
import type { FoundSettings, UsersRepo } from './users.repo.ts';

export type { FoundSettings } from './users.repo.ts';

export function createUsersService({ repo }: { repo: UsersRepo }) {
  return {
    /**
     * Changes to who is an active administrator take turns for the rest of `tx`, so two at once
     * (two demotions, or one leaving while demoting the other) cannot remove the last one.
     */
    async lockAdmins(tx: Tx): Promise<void> {
      await repo.lockAdmins(tx);
    },
    /** Whether `id` is an active administrator and no one else is. */
    async isLastActiveAdmin(id: number, tx?: Tx): Promise<boolean> {
      const user = await repo.standing(id, tx);
      return Boolean(user?.isAdmin && user.isActive) && (await repo.countOtherActiveAdmins(id, tx)) === 0;
    },
    /** Whether anyone but `id` has an account. */
    async othersExist(id: number, tx?: Tx): Promise<boolean> {
      return (await repo.countOthers(id, tx)) > 0;
    },
    async setStanding(id: number, standing: { isActive?: boolean; isAdmin?: boolean }, tx?: Tx): Promise<void> {
      await repo.setStanding(id, standing, tx);
    },
    /** The first finish counts: false when a late second one (another tab) found the date set. */
    async markOnboarded(id: number, at: Date): Promise<boolean> {
      return (await repo.markOnboarded(id, at)).count === 1;
    },
    async pauseDailyMessages(id: number): Promise<void> {
      await repo.setDailyPaused(id);
    },
    async applyFoundSettings(id: number, settings: FoundSettings): Promise<void> {
      await repo.applyFoundSettings(id, settings);
    },
    /**
     * Deletes the user inside `tx`; every table that names them cascades. Also signed-out sessions
     * that remember them in a pending verification step, which no foreign key reaches.
     */
    delete: (id: number, tx: Tx): Promise<boolean> => repo.delete(id, tx),
  };
}

export type UsersService = ReturnType<typeof createUsersService>;
