// Daily messages: the row unique on (user, local date) is the claim, and then the record of truth
// for writing and delivering that day's message. Hot paths go straight to the driver.
// The parts: the schedule's claims (daily.claims.repo.ts), the message's lifecycle
// (daily.messages.repo.ts) and the reads of its context (daily.context.repo.ts); this puts them together.
import type { Query } from '../../db/database.ts';
import { createDailyClaimsRepo } from './daily.claims.repo.ts';
import { createDailyContextRepo } from './daily.context.repo.ts';
import { createDailyMessagesRepo } from './daily.messages.repo.ts';

export type { ZoneNow } from './daily.claims.repo.ts';
export type { DailyUser } from './daily.context.repo.ts';
export type { DailyRow, DailyStatus } from './daily.messages.repo.ts';

export function createDailyRepo(query: Query) {
  return {
    // zones, claimDue, claimNow, stalled.
    ...createDailyClaimsRepo(query),
    // get, getOwned, startRun, heartbeat, markResearchRequested, compose, delivered, claimEmail,
    // releaseEmail, emailed, fail, retry.
    ...createDailyMessagesRepo(query),
    // user, researchIds, researchesOpen, interests, countBefore, preferredName, hasCalendars, settingFacts.
    ...createDailyContextRepo(query),
  };
}

export type DailyRepo = ReturnType<typeof createDailyRepo>;
