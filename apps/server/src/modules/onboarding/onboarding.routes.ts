// POST /api/onboarding/skip/: the onboarding screen's "Skip for now". It ends the interview the way
// a stop word does (the user is onboarded, open onboarding tabs are sent to the chat, and the chat
// gets its welcome); the session's own user only, and a second call changes nothing.
import { type TSkipOnboardingResponse, ZSkipOnboardingResponse } from '@daybook/contracts';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { requireUser } from '../../lib/auth.ts';

export interface OnboardingRoutesOptions {
  /** Ends the user's onboarding; false when it had ended already. */
  skip(userId: number): Promise<boolean>;
}

export default async function onboardingRoutes(fastify: FastifyInstance, { skip }: OnboardingRoutesOptions) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.post(
    '/api/onboarding/skip/',
    {
      config: {
        auth: 'user',
        docs: {
          tag: 'Accounts',
          summary: 'Skip the onboarding',
          description:
            'The onboarding screen\'s "Skip for now": ends the interview as a stop word does. Open onboarding tabs get a `redirect` to the chat over their socket, and the chat gets its welcome message. Calling it again changes nothing.',
          responses: { 200: { description: 'The onboarding has ended.' } },
        },
      },
      schema: { response: { 200: ZSkipOnboardingResponse } },
    },
    async (request): Promise<TSkipOnboardingResponse> => {
      await skip(requireUser(request).id);
      return { onboarded: true, redirect: '/chat' };
    },
  );
}
