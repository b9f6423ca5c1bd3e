// The morning's researches: up to DAILY_RESEARCH_MAX on the user's interests, rotated so one topic
// does not fill every morning, asked for once per message under topics the model makes of them.
import { DAILY_RESEARCH_MAX } from '@daybook/contracts';
import type { FastifyBaseLogger } from 'fastify';
import { z } from 'zod';
import type { Clock } from '../../lib/clock.ts';
import { modelFailure } from '../model/model.errors.ts';
import type { Llm } from '../model/model.types.ts';
import { type DailyResearchPort, PART_FAILED } from './daily.context.ts';
import type { DailyRepo, DailyRow } from './daily.repo.ts';

/** The model's topics for the daily research; anything but text is left out. */
const ZNewsTopics = z.object({
  topics: z.array(z.unknown()).transform((ts) => ts.filter((t): t is string => typeof t === 'string')),
});

const NEWS_TOPICS = `Turn each of the user's interests below into one short, general web search topic for this week's news on it (2 to 6 words, e.g. "e-bike commuting news"). The topics go to a public search engine: keep only the subject. Leave out every name of a person or pet, every place smaller than a country, and anything personal (family, health, work, who the user does things with). Give one topic per interest, in the same order.`;

export function createDailyResearch(deps: {
  repo: DailyRepo;
  clock: Clock;
  log: FastifyBaseLogger;
  llm: Llm | null;
  research: DailyResearchPort;
}) {
  const { repo, clock, log } = deps;

  /** Asks once for up to DAILY_RESEARCH_MAX researches on the user's interests, rotating through them. */
  async function requestResearch(row: DailyRow, notes: Record<string, string>) {
    // No research on this Daybook: nothing to mark (one statement less per message).
    if (deps.research.unavailable()) return;
    if (!(await repo.markResearchRequested(row.id, clock.now()))) return;
    const interests = await repo.interests(row.userId);
    if (!interests.length) return;
    const count = Math.min(DAILY_RESEARCH_MAX, interests.length);
    const start = ((await repo.countBefore(row.userId, row.id)) * count) % interests.length;
    const chosen = Array.from({ length: count }, (_, i) => interests[(start + i) % interests.length]).filter(
      (m): m is { key: string; data: string } => m !== undefined,
    );
    // What goes to the search provider is a topic the model makes of each interest, never the
    // memory's own words (names, places, who the user is with).
    const topics = await newsTopics(chosen, row.userId);
    if (!topics) {
      notes.research = PART_FAILED.research;
      return;
    }
    for (const query of topics) {
      try {
        const asked = await deps.research.request(row.userId, query, { origin: 'daily', dailyMessageId: row.id });
        if ('refused' in asked) notes.research = PART_FAILED.research;
      } catch (err) {
        log.warn({ err }, 'daily message: research request failed');
        notes.research = PART_FAILED.research;
      }
    }
  }

  /** General news topics for interests (one each, in order), or null when the model gave none. */
  async function newsTopics(chosen: Array<{ key: string; data: string }>, userId: number): Promise<string[] | null> {
    if (!deps.llm) return null;
    try {
      const { topics } = await deps.llm.structured({
        messages: [
          { role: 'system', content: NEWS_TOPICS },
          { role: 'user', content: chosen.map((m, i) => `${i + 1}. ${m.key}: ${m.data}`).join('\n') },
        ],
        name: 'news_topics',
        userId,
        description: 'One general web search topic per interest, in the same order.',
        parameters: {
          type: 'object',
          properties: { topics: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: chosen.length } },
          required: ['topics'],
        },
        schema: ZNewsTopics,
        signal: AbortSignal.timeout(60_000),
      });
      const clean = topics.map((t) => t.replace(/\s+/g, ' ').trim().slice(0, 80)).filter(Boolean);
      return clean.length ? clean.slice(0, chosen.length) : null;
    } catch (err) {
      log.warn(modelFailure(err), 'daily message: the model gave no research topics');
      return null;
    }
  }

  return { requestResearch };
}

export type DailyResearch = ReturnType<typeof createDailyResearch>;
