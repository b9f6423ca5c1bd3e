// POST /api/onboarding/skip/: the onboarding screen's "Skip for now". It ends the interview the way
// a stop word does (the user is onboarded, open onboarding tabs are sent to the chat, and the chat
// gets its welcome); the session's own user only, and a second call changes nothing.
import type { TSkipOnboardingResponse } from '@daybook/contracts';
import type { FastifyInstance } from 'fastify';
import { requireUser } from '../../lib/auth.ts';

export interface OnboardingRoutesOptions {
  /** Ends the user's onboarding; false when it had ended already. */
  skip(userId: number): Promise<boolean>;
}

export default async function onboardingRoutes(app: FastifyInstance, { skip }: OnboardingRoutesOptions) {
  app.post('/api/onboarding/skip/', async (request): Promise<TSkipOnboardingResponse> => {
    const user = requireUser(request);
    await skip(user.id);
    return { onboarded: true, redirect: '/chat' };
  });
}
