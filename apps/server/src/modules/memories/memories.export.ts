// The user's export file, streamed in batches: one export of a user at a time, a few an hour, and
// refusals answered slowly enough that asking again and again costs nothing.
import { setTimeout as sleep } from 'node:timers/promises';
import { MEMORY_MESSAGES, type TMemoryExport } from '@daybook/contracts';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import { LIMITS, type RateLimiter } from '../rate-limit/rate-limit.service.ts';
import type { ExportBatch, ExportCursor, MemoriesRepo } from './memories.repo.ts';

/** A refused export: 429, with the seconds after which asking again may succeed (Retry-After). */
export class ExportRefused extends AppError {
  constructor(
    message: string,
    readonly retryAfterSec: number,
  ) {
    super('rate_limited', message);
  }
}
/** What a refusal for an export still running tells the client to wait. */
const RUNNING_RETRY_SEC = 2;
/**
 * Refused exports of one user are answered one at a time, this far apart. Answered at once, a
 * client asking again at once (ignoring Retry-After) got hundreds of 429s a second, which took a
 * core and made another user's Memories page 10 times slower (`npm run bench:flood`).
 */
export const EXPORT_REFUSAL_SPACING_MS = 1000;

export function createMemoriesExport({
  repo,
  clock,
  limiter,
}: {
  repo: MemoriesRepo;
  clock: Clock;
  limiter: RateLimiter;
}) {
  /** Users with an export being read in this process. */
  const exporting = new Set<number>();
  /**
   * Users refused by the export limit, until when (clock ms): nothing gives a counted export back,
   * so until then every answer is no, and a client asking again and again costs no query.
   */
  const exportBlocked = new LRUCache<number, number>({ max: 10_000 });
  /** When each user's latest export refusal is (or was) answered, in performance.now() ms. */
  const exportRefusals = new LRUCache<number, number>({ max: 10_000 });

  /** Throws `refusal`: at once for the user's first, else EXPORT_REFUSAL_SPACING_MS after the one before. */
  async function refuseExport(userId: number, refusal: ExportRefused): Promise<never> {
    const now = performance.now();
    const at = Math.max(now, (exportRefusals.get(userId) ?? Number.NEGATIVE_INFINITY) + EXPORT_REFUSAL_SPACING_MS);
    exportRefusals.set(userId, at);
    if (at > now) await sleep(at - now);
    throw refusal;
  }

  /** The file's text: its head, the memories batch by batch, each read through `turn`, its end. */
  async function* chunks(
    userId: number,
    head: Omit<TMemoryExport, 'memories'>,
    turn: <T>(work: () => Promise<T>) => Promise<T>,
    done: () => void,
  ): AsyncGenerator<string> {
    try {
      yield `${JSON.stringify(head).slice(0, -1)},"memories":[`;
      let after: ExportCursor | null = null;
      for (let first = true; ; first = false) {
        const from = after;
        const batch: ExportBatch = await turn(() => repo.exportBatch(userId, from));
        if (batch.count) yield (first ? '' : ',') + batch.items;
        if (!batch.next) break;
        after = batch.next;
      }
      yield ']}';
    } finally {
      done();
    }
  }

  return {
    /**
     * The user's export file (TMemoryExport) as a stream of JSON text, read in batches of
     * EXPORT_BATCH, each through `turn` (the user's reads, two at a time). One export of a user at a
     * time, and MEMORY_EXPORTS_PER_HOUR, counted before anything is read: refusals throw
     * ExportRefused. The caller calls `done` when the response is over (reading ends by itself when
     * the file does). Memories changed while it runs may or may not be in it.
     */
    async exportAll(
      userId: number,
      turn: <T>(work: () => Promise<T>) => Promise<T> = (work) => work(),
    ): Promise<{ exportedAt: string; chunks: AsyncIterable<string>; done: () => void }> {
      if (exporting.has(userId)) {
        return refuseExport(userId, new ExportRefused(MEMORY_MESSAGES.exportRunning, RUNNING_RETRY_SEC));
      }
      const blockedUntil = exportBlocked.get(userId) ?? 0;
      const now = clock.now().getTime();
      if (blockedUntil > now) {
        const wait = Math.ceil((blockedUntil - now) / 1000);
        return refuseExport(userId, new ExportRefused(MEMORY_MESSAGES.exportLimit, wait));
      }
      exporting.add(userId);
      let held = true;
      const done = () => {
        if (held) exporting.delete(userId);
        held = false;
      };
      const attempt = await limiter.attempt(LIMITS.memoryExport(userId)).catch((err: unknown) => {
        done();
        throw err;
      });
      if (!attempt.allowed) {
        done();
        exportBlocked.set(userId, clock.now().getTime() + attempt.retryAfterSec * 1000);
        return refuseExport(userId, new ExportRefused(MEMORY_MESSAGES.exportLimit, attempt.retryAfterSec));
      }
      exportBlocked.delete(userId);
      const head: Omit<TMemoryExport, 'memories'> = {
        format: 'daybook-memories',
        version: 1,
        exported_at: clock.now().toISOString(),
      };
      return { exportedAt: head.exported_at, chunks: chunks(userId, head, turn, done), done };
    },
  };
}
