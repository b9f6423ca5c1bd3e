// The calendar API for the web app, and the address providers send the browser back to after consent.
import { ZCalendarConnectionList, ZCalendarDay, ZCalendarEventsQuery } from '@daybook/contracts';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { requireUser } from '../../lib/auth.ts';
import type { CalendarService } from './calendar.types.ts';

/** The callback's query; anything else a provider adds is ignored. */
function param(query: unknown, name: string): string | undefined {
  const value = (query as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' && value.length <= 4096 ? value : undefined;
}

export default async function calendarRoutes(fastify: FastifyInstance, { calendar }: { calendar: CalendarService }) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.get(
    '/api/calendar/events/',
    {
      config: {
        auth: 'user',
        docs: {
          tag: 'Calendar',
          summary: "A day's events",
          description:
            'Events of every connected calendar on one day. A calendar that cannot be read is listed in `problems` instead of failing the request.',
          responses: { 200: { description: 'The day.' } },
          queryNotes: {
            date: 'The day, YYYY-MM-DD.',
            tz: "IANA time zone of the day; defaults to the user's, then UTC.",
          },
        },
      },
      schema: { querystring: ZCalendarEventsQuery, response: { 200: ZCalendarDay } },
    },
    async (request, reply) => {
      const user = requireUser(request);
      reply.header('Cache-Control', 'private, no-store');
      return calendar.eventsForDay(user.id, request.query.date, request.query.tz);
    },
  );

  app.get(
    '/api/calendar/connections/',
    {
      config: {
        auth: 'user',
        docs: {
          tag: 'Calendar',
          summary: 'Connected calendars',
          description:
            'Never their tokens or ICS addresses. Connecting and removing happen on the Calendar Connections page.',
          responses: { 200: { description: 'The connections.' } },
        },
      },
      schema: { response: { 200: ZCalendarConnectionList } },
    },
    async (request, reply) => {
      const user = requireUser(request);
      reply.header('Cache-Control', 'private, no-store');
      return calendar.list(user.id);
    },
  );

  // The redirect URI registered with each provider (allauth's path for it).
  fastify.get<{ Params: { provider: string } }>('/accounts/:provider/login/callback/', async (request, reply) => {
    const outcome = await calendar.finishConnect(request.user?.id ?? null, request.params.provider, {
      state: param(request.query, 'state'),
      code: param(request.query, 'code'),
      error: param(request.query, 'error'),
    });
    const target = new URL(outcome.callbackUrl, 'http://x');
    if (outcome.ok) {
      target.searchParams.set('connected', outcome.connection.provider);
    } else {
      // allauth's failure parameters on the callback_url.
      target.searchParams.set('error', outcome.error);
      target.searchParams.set('error_process', 'connect');
    }
    return reply.header('Cache-Control', 'no-store').redirect(target.pathname + target.search, 302);
  });
}
