// The pipeline's first step: the model plans the sub-queries to search, beside the user's own wording.
import { RESEARCH_QUERY_MAX } from '@daybook/contracts';
import type { FastifyBaseLogger } from 'fastify';
import { z } from 'zod';
import { ModelOutputError } from '../model/model.errors.ts';
import type { Llm, LlmMessage, ModelAsk } from '../model/model.types.ts';
import { modelStepFailure } from './research.failures.ts';

/** A plan's queries; anything that is not text is left out. */
const ZPlan = z.object({
  queries: z.array(z.unknown()).transform((qs) => qs.filter((q): q is string => typeof q === 'string')),
});

export function createPlanner(deps: {
  llm: Llm | null;
  log: FastifyBaseLogger;
  /** Today's date (YYYY-MM-DD), which the prompt names. */
  today: () => string;
}) {
  const { llm, log, today } = deps;

  return async function plan(query: string, ask: ModelAsk, signal: AbortSignal, maxPlanned: number): Promise<string[]> {
    if (!llm) return [query];
    // Only the request itself: nothing else the user told Daybook goes to a search provider.
    const messages: LlmMessage[] = [
      {
        role: 'system',
        content: `You plan web research. Today is ${today()}. Write ${maxPlanned > 2 ? `2 to ${maxPlanned}` : maxPlanned} short, plain-language web search queries that together cover the request. Use only what the request says; add no personal details.`,
      },
      { role: 'user', content: query },
    ];
    let planned: string[] = [];
    try {
      const plan = await llm.structured({
        messages,
        name: 'plan_research',
        description: 'The web searches to run for this research.',
        parameters: {
          type: 'object',
          properties: {
            queries: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: maxPlanned },
          },
          required: ['queries'],
        },
        schema: ZPlan,
        signal,
        ...ask,
      });
      planned = plan.queries;
    } catch (err) {
      if (signal.aborted) throw err;
      if (!(err instanceof ModelOutputError)) throw modelStepFailure(err, 'plan', log);
      // The model answered, but never with a plan: the request's own words are searched.
      log.warn(
        { kind: 'format', step: 'plan' },
        'research: the model gave no usable plan; searching the request as written',
      );
    }
    const all = [query, ...planned.map((q) => q.trim().slice(0, RESEARCH_QUERY_MAX)).filter(Boolean)];
    return [...new Map(all.map((q) => [q.toLowerCase(), q])).values()].slice(0, maxPlanned + 1);
  };
}

export type Planner = ReturnType<typeof createPlanner>;
