// Account rules in allauth's terms (email login, mandatory verification, enumeration prevention),
// independent of HTTP: routes turn outcomes and AccountErrors into responses.
//
// The parts: signing up with an invite (accounts.signup.ts), signing in (accounts.login.ts),
// verifying addresses (accounts.verification.ts) and managing them (accounts.emails.ts), changing
// and resetting passwords (accounts.password.ts), and the user as the APIs show them
// (accounts.profile.ts). This file ties them together.
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../lib/clock.ts';
import type { Signer } from '../../lib/signing.ts';
import type { InvitesService } from '../invites/invites.service.ts';
import type { MailQueue } from '../mail/mail.service.ts';
import type { RateLimiter } from '../rate-limit/rate-limit.service.ts';
import { createEmailAddresses } from './accounts.emails.ts';
import { createLogin } from './accounts.login.ts';
import { createPasswordChanges } from './accounts.password.ts';
import { createProfile, serializeUser } from './accounts.profile.ts';
import type { AccountsRepo } from './accounts.repo.ts';
import { createSignup } from './accounts.signup.ts';
import type { FrontendUrls } from './accounts.types.ts';
import { createEmailVerification } from './accounts.verification.ts';

export { cleanEmail } from './accounts.fields.ts';
export { presentLocation } from './accounts.profile.ts';
export type { FrontendUrls, LoginOutcome, RequestContext, VerificationMail } from './accounts.types.ts';

export interface AccountsDeps {
  repo: AccountsRepo;
  invites: InvitesService;
  mail: MailQueue;
  limiter: RateLimiter;
  signer: Signer;
  clock: Clock;
  publicUrl: string;
  frontendUrls: FrontendUrls;
  log: FastifyBaseLogger;
}

export function createAccountsService(deps: AccountsDeps) {
  const { repo, invites, mail, limiter, signer, clock, publicUrl, frontendUrls, log } = deps;
  const verification = createEmailVerification({ repo, mail, limiter, signer, clock, frontendUrls, log });
  const { sendVerification } = verification;
  const profile = createProfile({ repo });
  const signup = createSignup({ repo, invites, mail, limiter, publicUrl, log, sendVerification });
  const login = createLogin({ repo, limiter, clock, sendVerification });
  const passwords = createPasswordChanges({ repo, mail, limiter, signer, clock, frontendUrls, log });
  const emails = createEmailAddresses({ repo, limiter, sendVerification });

  return {
    serializeUser,
    userMe: profile.userMe,
    updateSettings: profile.updateSettings,

    login: login.login,
    signupAllauth: signup.signupAllauth,
    signupProduct: signup.signupProduct,
    lookupInvite: signup.lookupInvite,

    checkVerifyKey: verification.checkVerifyKey,
    confirmVerifyKey: verification.confirmVerifyKey,
    resendVerification: verification.resendVerification,

    requestPasswordReset: passwords.requestPasswordReset,
    checkResetKey: passwords.checkResetKey,
    resetPassword: passwords.resetPassword,
    changePassword: passwords.changePassword,
    reauthenticate: login.reauthenticate,

    listEmails: emails.listEmails,
    addEmail: emails.addEmail,
    resendEmail: emails.resendEmail,
    setPrimaryEmail: emails.setPrimaryEmail,
    removeEmail: emails.removeEmail,

    bootstrapInvite: signup.bootstrapInvite,
  };
}

export type AccountsService = ReturnType<typeof createAccountsService>;
