// The job of one message: gathers its facts (waiting a while for its researches), has it written,
// and delivers it. Every step is recorded on the row, so a retry repeats none of them.
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../lib/clock.ts';
import type { DailyContext } from './daily.context.ts';
import type { DailyDelivery } from './daily.delivery.ts';
import type { DailyRepo, DailyRow } from './daily.repo.ts';
import type { DailyResearch } from './daily.research.ts';
import type { DailyWriter } from './daily.write.ts';
import { knownZone } from './daily.zones.ts';

/** How long a message waits for its researches before it goes without the unfinished ones. */
const RESEARCH_WAIT_MS = 10 * 60_000;
/** How often a message waiting for researches looks again. */
const RESEARCH_POLL_SEC = 20;
/** A live run marks its message this often, however long its model takes (see STALLED_SEC). */
const HEARTBEAT_MS = 20_000;

export function createDailyGenerator(
  deps: {
    repo: DailyRepo;
    clock: Clock;
    log: FastifyBaseLogger;
    /** Sends the generation job of message `id` (after `delaySec`). */
    enqueue(id: number, delaySec?: number): Promise<void>;
  },
  parts: { context: DailyContext; research: DailyResearch; writer: DailyWriter; delivery: DailyDelivery },
) {
  const { repo, clock, log } = deps;
  const { context, research, writer, delivery } = parts;

  /** Writes the message of row `id` and delivers it; safe to run again at any point. */
  async function generate(id: number, signal: AbortSignal): Promise<void> {
    const row = await repo.startRun(id, clock.now());
    if (!row || row.status === 'failed') return;
    const beat = setInterval(() => {
      repo.heartbeat(id, clock.now()).catch((err) => log.warn({ err }, 'daily message heartbeat failed'));
    }, HEARTBEAT_MS);
    try {
      await run(row, signal);
    } finally {
      clearInterval(beat);
    }
  }

  async function run(row: DailyRow, signal: AbortSignal): Promise<void> {
    const user = await repo.user(row.userId);
    if (!user) return;
    // Paused (or deactivated) since the claim: that scheduled message is not delivered. A message
    // asked for with "send now" still is.
    if (row.trigger === 'schedule' && (user.isDailyMessagePaused || !user.isActive)) {
      if (row.chatMessageId === null) await repo.fail(row.id, 'paused');
      return;
    }
    const tz = knownZone(user.timeZone);
    let ready = row;
    if (row.messageText === null) {
      const notes: Record<string, string> = {};
      if (!row.researchRequestedAt) await research.requestResearch(row, notes);
      // Researches still running: look again shortly, up to RESEARCH_WAIT_MS after they were asked for.
      const askedAt = row.researchRequestedAt ?? clock.now();
      if ((await repo.researchesOpen(row.id)) > 0 && clock.now().getTime() - askedAt.getTime() < RESEARCH_WAIT_MS) {
        if (Object.keys(notes).length) log.debug({ notes }, 'daily message: research notes');
        await deps.enqueue(row.id, RESEARCH_POLL_SEC);
        return;
      }
      const facts = await context.gather(row, user, tz, notes);
      const text = await writer.write(facts, signal, row.userId);
      ready = (await repo.compose(row.id, text, notes, clock.now())) ?? row;
    }
    if (!ready.messageText) return;
    await delivery.deliver(ready, user);
  }

  return {
    generate,

    /** The job gave up: the message is marked failed (the user can still ask for it again tomorrow). */
    async failed(id: number, error: string): Promise<void> {
      await repo.fail(id, error.slice(0, 500));
    },
  };
}
