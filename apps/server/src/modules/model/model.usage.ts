// What the model costs, per user and purpose (issue 33): each call's tokens, as its endpoint reports
// them, are added to the user's row of the day (model.usage.repo.ts) and counted by purpose for
// /metrics; with LLM_USER_DAILY_TOKENS set, a user who spent that many today gets a clear note
// instead of a model call until midnight UTC.
import { MODEL_USAGE_TOP_USERS, type TModelUsage } from '@daybook/contracts';
import type { FastifyBaseLogger } from 'fastify';
import { UsageLimitError } from './model.errors.ts';
import type { Llm, LlmUsage } from './model.types.ts';
import type { ModelUsageRepo, Purpose, UsageTotals } from './model.usage.repo.ts';

export function createUsageMeter(deps: {
  repo: ModelUsageRepo;
  /** Tokens a user may spend a day (LLM_USER_DAILY_TOKENS); null: no limit. */
  dailyLimit: number | null;
  log: FastifyBaseLogger;
  /** Totals by purpose, for /metrics (no user in them). */
  count?: (purpose: Purpose, usage: LlmUsage) => void;
}) {
  const { repo, dailyLimit, log } = deps;

  async function allowed(userId: number | undefined) {
    if (!dailyLimit || userId === undefined) return;
    if ((await repo.spentToday(userId)) >= dailyLimit) throw new UsageLimitError(dailyLimit);
  }

  function record(userId: number | undefined, purpose: Purpose, usage: LlmUsage) {
    deps.count?.(purpose, usage);
    if (userId === undefined) return;
    repo.add(userId, purpose, usage).catch((err) => log.warn({ err, purpose }, 'model usage: not recorded'));
  }

  const counts = (t: UsageTotals) => ({
    calls: t.calls,
    prompt_tokens: t.prompt,
    cached_tokens: t.cached,
    completion_tokens: t.completion,
  });

  return {
    /** The admin's report of the last `days` days. */
    async report(days: number): Promise<TModelUsage> {
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
