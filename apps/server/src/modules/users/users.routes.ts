import { DAILY_MESSAGES, type TUserLocation, ZUpdateUserMeRequest, ZUserMe } from '@daybook/contracts';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { requireUser } from '../../lib/auth.ts';
import { AppError } from '../../lib/errors.ts';
import type { AccountsService } from '../accounts/accounts.service.ts';

export interface UsersRoutesOptions {
  accounts: AccountsService;
  /**
   * Finds a place name for the weather: null when there is no such place; throws when the
   * geocoder cannot be reached. Absent: no weather provider, so a location is stored without coordinates.
   */
  geocode: ((name: string) => Promise<TUserLocation | null>) | null;
  /** False once the user looked up too many places (each is a request to the weather provider). */
  allowGeocode?: (userId: number) => Promise<boolean>;
  /** Tells the rest of the server (open chat sockets) about changed settings. */
  onSettingsChanged?: (userId: number, settings: { learnFromChats: boolean; timeZone: string | null }) => void;
}

const USER = { auth: 'user' } as const;

export default async function usersRoutes(
  fastify: FastifyInstance,
  { accounts, geocode, allowGeocode, onSettingsChanged }: UsersRoutesOptions,
) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/api/users/me/',
    {
      config: {
        ...USER,
        docs: {
          tag: 'Accounts',
          summary: 'The signed-in user',
          description: 'The account and its settings.',
          responses: { 200: { description: 'The user.' } },
        },
      },
      schema: { response: { 200: ZUserMe } },
    },
    async (request) => accounts.userMe(requireUser(request)),
  );

  const patchSchema = { body: ZUpdateUserMeRequest, response: { 200: ZUserMe } };
  app.patch(
    '/api/users/me/',
    {
      config: {
        ...USER,
        docs: {
          tag: 'Accounts',
          summary: "Change the user's settings",
          description:
            'Only the fields sent change. A `location` is looked up with the weather provider when saved: without one configured it is a field error (400), and nothing changes.',
          responses: { 200: { description: 'The user with the new settings.' } },
          errors: { 429: 'Too many place look-ups.', 503: 'The weather provider cannot be reached just now.' },
        },
      },
      schema: patchSchema,
    },
    async (request) => {
      const user = requireUser(request);
      const { location, ...patch } = request.body;
      let place: TUserLocation | null | undefined;
      if (location === null) place = null;
      else if (location !== undefined) {
        // Geocoded once, here: the daily message then only needs the coordinates.
        // Not a passing outage: this server has no weather at all, which the user can only ask about.
        if (!geocode)
          throw new AppError('validation_error', DAILY_MESSAGES.weatherNotSetUp, {
            location: [DAILY_MESSAGES.weatherNotSetUp],
          });
        if (allowGeocode && !(await allowGeocode(user.id)))
          throw new AppError('rate_limited', DAILY_MESSAGES.locationLimit, {
            location: [DAILY_MESSAGES.locationLimit],
          });
        const found = await geocode(location).catch(() => {
          throw new AppError('unavailable', DAILY_MESSAGES.weatherUnavailable, {
            location: [DAILY_MESSAGES.weatherUnavailable],
          });
        });
        if (!found)
          throw new AppError('validation_error', DAILY_MESSAGES.locationNotFound, {
            location: [DAILY_MESSAGES.locationNotFound],
          });
        place = found;
      }
      const me = await accounts.updateSettings(user, { ...patch, location: place });
      onSettingsChanged?.(user.id, { learnFromChats: me.learn_from_chats, timeZone: me.time_zone });
      return me;
    },
  );
}
