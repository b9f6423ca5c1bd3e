// What the model costs, per user and purpose (issue 33): each call's tokens, as its endpoint reports
// them, are added to the user's row of the day (model.usage.repo.ts) and counted by purpose for
// /metrics; with LLM_USER_DAILY_TOKENS set, a user who spent that many today gets a clear note
// instead of a model call until midnight UTC.
import { MODEL_USAGE_TOP_USERS, type TModelUsage } from '@daybook/contracts';
import type { FastifyBaseLogger } from 'fastify';
import { UsageLimitError } from './model.errors.ts';
import type { Llm, LlmUsage } from './model.types.ts';
import type { ModelUsageRepo, Purpose, UsageRow, UsageTotals } from './model.usage.repo.ts';

/** What the model spent is written at least this often. */
const FLUSH_MS = 1000;

export function createUsageMeter(deps: {
  repo: ModelUsageRepo;
  /** Tokens a user may spend a day (LLM_USER_DAILY_TOKENS); null: no limit. */
  dailyLimit: number | null;
  log: FastifyBaseLogger;
  /** Totals by purpose, for /metrics (no user in them). */
  count?: (purpose: Purpose, usage: LlmUsage) => void;
  /** How often what was counted is written (FLUSH_MS). */
  flushMs?: number;
}) {
  const { repo, dailyLimit, log } = deps;
  const today = () => new Date().toISOString().slice(0, 10);
  // Tokens are added up here and written once a second, in one statement: a write per model call
  // cost the chat a round trip and a share of its CPU per turn (npm run bench).
  const unwritten = new Map<string, UsageRow>();

  async function flush() {
    if (!unwritten.size) return;
    const rows = [...unwritten.values()];
    unwritten.clear();
    await repo.addMany(rows).catch((err) => log.warn({ err }, 'model usage: not recorded'));
  }
  const flushing = setInterval(() => void flush(), deps.flushMs ?? FLUSH_MS);
  flushing.unref();

  /** Today's tokens of the user not written yet. */
  function spentHere(userId: number) {
    const day = today();
    let n = 0;
    for (const row of unwritten.values())
      if (row.userId === userId && row.day === day) n += row.prompt + row.completion;
    return n;
  }

  async function allowed(userId: number | undefined) {
    if (!dailyLimit || userId === undefined) return;
    if ((await repo.spentToday(userId)) + spentHere(userId) >= dailyLimit) throw new UsageLimitError(dailyLimit);
  }

  function record(userId: number | undefined, purpose: Purpose, usage: LlmUsage) {
    deps.count?.(purpose, usage);
    if (userId === undefined) return;
    const day = today();
    const key = `${userId}|${day}|${purpose}`;
    const row = unwritten.get(key) ?? { userId, day, purpose, calls: 0, prompt: 0, cached: 0, completion: 0 };
    row.calls++;
    row.prompt += usage.prompt;
    row.cached += usage.cached ?? 0;
    row.completion += usage.completion;
    unwritten.set(key, row);
  }

  const counts = (t: UsageTotals) => ({
    calls: t.calls,
    prompt_tokens: t.prompt,
    cached_tokens: t.cached,
    completion_tokens: t.completion,
  });

  return {
    /** Writes what is counted and stops (the app closes). */
    async close() {
      clearInterval(flushing);
      await flush();
    },
    /** The admin's report of the last `days` days (what is counted is written first). */
    async report(days: number): Promise<TModelUsage> {
      await flush();
      const r = await repo.report(days, MODEL_USAGE_TOP_USERS);
      return {
        days,
        daily_limit: dailyLimit,
        totals: counts(r.totals),
        by_purpose: r.byPurpose.map((p) => ({ purpose: p.purpose as Purpose, ...counts(p) })),
        by_day: r.byDay.map((d) => ({ day: d.day, ...counts(d) })),
        top_users: r.topUsers.map((u) => ({ id: u.userId, email: u.email, ...counts(u) })),
      };
    },
    /** `llm` for `purpose`: each call checked against the allowance and its tokens recorded. */
    meter(llm: Llm, purpose: Purpose): Llm {
      return {
        ...llm,
        async *stream(messages, signal, options = {}) {
          await allowed(options.userId);
          yield* llm.stream(messages, signal, {
            ...options,
            onUsage: (usage) => {
              record(options.userId, purpose, usage);
              options.onUsage?.(usage);
            },
          });
        },
        async structured(request) {
          await allowed(request.userId);
          return llm.structured({
            ...request,
            onUsage: (usage) => {
              record(request.userId, purpose, usage);
              request.onUsage?.(usage);
            },
          });
        },
      };
    },
  };
}

export type UsageMeter = ReturnType<typeof createUsageMeter>;
