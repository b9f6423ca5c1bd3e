// The calendar API for the web app, and the address providers send the browser back to after consent.
import { ZCalendarEventsQuery } from '@daybook/contracts';
import type { FastifyInstance } from 'fastify';
import { requireUser } from '../../lib/auth.ts';
import type { CalendarService } from './calendar.types.ts';

/** The callback's query; anything else a provider adds is ignored. */
function param(query: unknown, name: string): string | undefined {
  const value = (query as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' && value.length <= 4096 ? value : undefined;
}

export default async function calendarRoutes(app: FastifyInstance, { calendar }: { calendar: CalendarService }) {
  app.get('/api/calendar/events/', async (request, reply) => {
    const user = requireUser(request);
    const query = ZCalendarEventsQuery.parse(request.query);
    reply.header('Cache-Control', 'private, no-store');
    return calendar.eventsForDay(user.id, query.date, query.tz);
  });

  app.get('/api/calendar/connections/', async (request, reply) => {
    const user = requireUser(request);
    reply.header('Cache-Control', 'private, no-store');
    return calendar.list(user.id);
  });

  // The redirect URI registered with each provider (allauth's path for it).
  app.get<{ Params: { provider: string } }>('/accounts/:provider/login/callback/', async (request, reply) => {
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
