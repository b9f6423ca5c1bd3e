// Why a research fails, in words for the user, and whether another run may succeed.
import type { FastifyBaseLogger } from 'fastify';
import { type FailureKind, failureKind, modelFailure, transient, UsageLimitError } from '../model/model.errors.ts';
import type { SearchErrorKind } from './search.ts';

/** The model's part of a research, as a failure names it. */
export type Step = 'plan' | 'write';
const STEP: Record<Step, string> = { plan: 'plan the research', write: 'write the report' };

/** Why a research failed, in words for the user: the step, and the cause. */
export const FAILURES = {
  /** In the user's words: a setup problem is for whoever runs Daybook (its details go to the log). */
  searchFailed: (kind: SearchErrorKind | undefined) =>
    kind === 'rate_limited'
      ? 'The search provider turned the searches away: too many just now.'
      : kind === 'unavailable'
        ? 'The search provider could not be reached.'
        : "This Daybook's search provider is not set up right, so the web could not be searched. Ask whoever runs this Daybook to check it.",
  noResults: 'The web search found no pages to read for this topic.',
  nothingRead: (found: number) =>
    `None of the ${found} page${found === 1 ? '' : 's'} found could be read (they refused, were too large, or were not web pages).`,
  model: (kind: FailureKind, step: Step): string => {
    const to = STEP[step];
    const settings = 'Whoever runs this Daybook needs to check its model settings.';
    switch (kind) {
      case 'timeout':
        return `The assistant model did not answer in time when asked to ${to}.`;
      case 'credentials':
        return `The assistant model refused this server's credentials, so it could not ${to}. ${settings}`;
      case 'not-found':
        return `The model this Daybook is set to use was not found at its provider, so it could not ${to}. ${settings}`;
      case 'busy':
        return `The assistant model was busy or over its usage limit when asked to ${to}.`;
      case 'server-error':
        return `The assistant model's server failed when asked to ${to}.`;
      case 'rejected':
        return `The assistant model turned down the request to ${to} (it may have been too long for it).`;
      case 'content-filter':
        return `The assistant model's provider refused to ${to} under its content policy.`;
      case 'format':
        return "This server's model cannot write reports in the format Daybook needs.";
      default:
        return `The assistant model could not be reached to ${to}.`;
    }
  },
  malformed: 'The assistant model did not write a valid report, even when asked again.',
  unexpected: 'Something went wrong on the server while running the research.',
  interrupted: 'The research was interrupted several times (the server restarted) and was stopped.',
  tooLong: 'The research took too long and was stopped.',
};

/** An error a later attempt may not meet (the network, a busy provider). */
export function isRetryable(err: unknown): boolean {
  const e = err as { retryable?: unknown; status?: unknown; name?: string; constructor?: { name?: string } };
  if (typeof e?.retryable === 'boolean') return e.retryable;
  if (typeof e?.status === 'number') return e.status === 408 || e.status === 429 || e.status >= 500;
  const kind = e?.constructor?.name ?? e?.name ?? '';
  return /Connection|Timeout|Abort|FetchError|ECONN|ETIMEDOUT/i.test(kind);
}

export class ResearchFailure extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

/** A model call's failure, as the research's: the step and its cause, retried when it may pass. */
export function modelStepFailure(err: unknown, step: Step, log: FastifyBaseLogger): ResearchFailure {
  // The user's allowance of the day is spent: that is the reason, in its own words.
  if (err instanceof UsageLimitError) return new ResearchFailure(err.message, false);
  const kind = failureKind(err);
  log.warn({ ...modelFailure(err), step }, 'research: a model call failed');
  return new ResearchFailure(FAILURES.model(kind, step), transient(kind));
}
