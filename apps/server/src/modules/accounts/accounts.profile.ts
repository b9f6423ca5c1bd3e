// The signed-in user as the APIs show them (allauth's user, the product's users/me) and the
// settings they change there.
import type { TAllauthUser, TTemperatureUnit, TUpdateUserMeRequest, TUserLocation, TUserMe } from '@daybook/contracts';
import type { AccountsRepo, UserRow } from './accounts.repo.ts';

/** The weather's place as the API shows it: set only with its coordinates. */
export function presentLocation(
  user: Pick<UserRow, 'locationName' | 'locationCountry' | 'latitude' | 'longitude'>,
): TUserLocation | null {
  return user.locationName !== null && user.latitude !== null && user.longitude !== null
    ? {
        name: user.locationName,
        country_code: user.locationCountry,
        latitude: user.latitude,
        longitude: user.longitude,
      }
    : null;
}

export function serializeUser(user: UserRow): TAllauthUser {
  return { id: user.id, display: user.email, email: user.email, has_usable_password: user.passwordHash !== null };
}

export function createProfile({ repo }: { repo: Pick<AccountsRepo, 'isEmailVerified' | 'updateUser'> }) {
  async function userMe(user: UserRow): Promise<TUserMe> {
    const emailVerified = await repo.isEmailVerified(user.id, user.email);
    return {
      id: user.id,
      email: user.email,
      display: user.email,
      has_usable_password: user.passwordHash !== null,
      email_verified: emailVerified,
      is_admin: user.isAdmin,
      is_daily_message_paused: user.isDailyMessagePaused,
      daily_message_time: user.dailyMessageTime,
      time_zone: user.timeZone,
      location: presentLocation(user),
      temperature_unit: user.temperatureUnit as TTemperatureUnit,
      daily_message_email: user.dailyMessageEmail,
      learn_from_chats: user.learnFromChats,
      onboarded: user.onboardedAt !== null,
      date_joined: user.createdAt.toISOString(),
    };
  }

  return {
    userMe,

    /** `location` here is already geocoded (the users routes do it); null clears it. */
    async updateSettings(
      user: UserRow,
      patch: Omit<TUpdateUserMeRequest, 'location'> & { location?: TUserLocation | null },
    ) {
      const changes: Partial<UserRow> = {};
      if (patch.is_daily_message_paused !== undefined) changes.isDailyMessagePaused = patch.is_daily_message_paused;
      if (patch.learn_from_chats !== undefined) changes.learnFromChats = patch.learn_from_chats;
      if (patch.daily_message_time !== undefined) changes.dailyMessageTime = patch.daily_message_time;
      if (patch.daily_message_email !== undefined) changes.dailyMessageEmail = patch.daily_message_email;
      if (patch.time_zone !== undefined) changes.timeZone = patch.time_zone;
      if (patch.temperature_unit !== undefined) changes.temperatureUnit = patch.temperature_unit;
      if (patch.location !== undefined) {
        changes.locationName = patch.location?.name ?? null;
        changes.locationCountry = patch.location?.country_code ?? null;
        changes.latitude = patch.location?.latitude ?? null;
        changes.longitude = patch.location?.longitude ?? null;
      }
      const updated = Object.keys(changes).length ? await repo.updateUser(user.id, changes) : user;
      return userMe(updated);
    },
  };
}
