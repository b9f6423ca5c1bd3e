// ICS calendars are parsed and expanded in a worker thread (ics.worker.mjs), with a deadline and a
// heap limit: a large or hostile calendar costs that thread, never the server's event loop.
import { createHash } from 'node:crypto';
import { createWorkerPool, WorkerPoolError } from '../../lib/worker-pool.ts';
import { CalendarError, type DayWindow, type SourceEvent } from './calendar.types.ts';
import { IcsError } from './ics.ts';

const WORKER_URL = new URL('./ics.worker.mjs', import.meta.url);

export const TOO_COMPLEX = 'That calendar is too large or too complex for Daybook to read.';
export const BUSY = 'Daybook is busy reading calendars. Try again in a minute.';

export interface IcsReader {
  /**
   * The calendar's name, what of it is left out (in words for its owner) and, with a window, that
   * day's events; throws IcsError or CalendarError.
   */
  read(text: string, window?: DayWindow): Promise<{ name: string | null; notes: string[]; events: SourceEvent[] }>;
  close(): Promise<void>;
}

export function createIcsReader(options: { timeoutMs?: number; maxQueue?: number } = {}): IcsReader {
  // One thread: calendars are read now and then, and the other core stays with the server.
  const pool = createWorkerPool<
    { key: string; text: string; window?: { date: string; timeZone: string; start: number; end: number } },
    { name: string | null; notes: string[]; events: SourceEvent[] }
  >({
    url: WORKER_URL,
    label: 'calendar',
    workers: 1,
    timeoutMs: options.timeoutMs ?? 10_000,
    maxQueue: options.maxQueue ?? 50,
    maxOldGenerationSizeMb: 768,
  });
  return {
    async read(text, window) {
      // The worker keeps parsed calendars by this digest, so the next day asked for is not parsed again.
      const key = createHash('sha256').update(text).digest('base64url');
      try {
        return await pool.run({
          key,
          text,
          window: window && { ...window, start: window.start.getTime(), end: window.end.getTime() },
        });
      } catch (err) {
        if (!(err instanceof WorkerPoolError)) throw err;
        if (err.code === 'failed' && err.message.startsWith('ics:')) throw new IcsError(err.message.slice(4));
        if (err.code === 'busy') throw new CalendarError('unreachable', BUSY);
        // Too slow, or out of memory: the calendar is the problem, not the network.
        if (err.code === 'timeout' || err.code === 'failed') throw new IcsError(TOO_COMPLEX);
        throw new CalendarError('unreachable', BUSY);
      }
    },
    close: () => pool.close(),
  };
}
