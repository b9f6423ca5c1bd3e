// The daily message calls: one message (GET /api/daily-messages/{id}/, owner only; 404 for anyone
// else's) and "Send today's message now". The settings themselves are PATCH /api/users/me/
// (auth/api.ts); a new account's time zone is set at sign-in (auth/time-zone.ts).
import { ZDailyMessage, ZSendNowResponse } from '@daybook/contracts';
import { ApiError, apiRequest } from '../../lib/api.ts';

export const dailyMessagePath = (id: number) => `/api/daily-messages/${id}/`;
export const dailyMessagePagePath = (id: number) => `/resources/daily-message/${id}`;
export const askInChatPath = (id: number) => `/chat?dmid=${id}`;

/** Largest id the database holds (a PostgreSQL integer). */
const ID_MAX = 2_147_483_647;

/** Only positive whole numbers name a daily message; anything else is not found without asking. */
export function parseDailyMessageId(raw: string | null | undefined): number | null {
  if (!raw || !/^\d{1,10}$/.test(raw)) return null;
  const id = Number(raw);
  return id > 0 && id <= ID_MAX ? id : null;
}

export const getDailyMessage = (id: number, signal?: AbortSignal) =>
  apiRequest(dailyMessagePath(id), ZDailyMessage, { signal });

/** 404 (unknown, or another user's) and 400 (an id the server refuses to read) both mean: no such message. */
export const isNotFound = (err: unknown) => err instanceof ApiError && (err.status === 404 || err.status === 400);

export const SEND_NOW_PATH = '/api/daily-messages/send-now/';

/** 200/202 with today's message, queued or already delivered; 429 past DAILY_SEND_NOW_PER_DAY a day. */
export const sendDailyMessageNow = () => apiRequest(SEND_NOW_PATH, ZSendNowResponse, { method: 'POST' });
