// The pipeline on a claimed research: plan, search, read, keep the relevant parts, write, store and
// deliver. Each step lives in its own file; this one runs them in order and records the steps.
import { RESEARCH_MAX_PAGES } from '@daybook/contracts';
import type { LlmUsage, ModelAsk } from '../model/model.types.ts';
import { type Chunk, chunkText, selectChunks } from './chunks.ts';
import { FAILURES, ResearchFailure } from './research.failures.ts';
import type { Planner } from './research.plan.ts';
import type { Ranker } from './research.rank.ts';
import type { PageReader } from './research.read.ts';
import type { ResearchProgress, ResearchRepo, ResearchRow, ResearchStep } from './research.repo.ts';
import type { WebSearch } from './research.search.ts';
import type { Writer } from './research.write.ts';

/** Sub-queries the model plans, beside the user's own wording. */
const MAX_PLANNED = 4;
/** A daily message's research is brief: fewer searches and pages, so several fit in a morning. */
const BRIEF = { planned: 2, pages: 5 };

/** Records (and shows) a step the run has reached. */
export type RecordStep = (stage: ResearchStep, progress: ResearchProgress) => Promise<void>;

export function createPipeline(deps: {
  repo: Pick<ResearchRepo, 'counts' | 'complete'>;
  plan: Planner;
  searchAll: WebSearch;
  readPage: PageReader;
  rank: Ranker;
  write: Writer;
  /** Posts the outcome to the chat. */
  deliver: (row: ResearchRow) => Promise<void>;
}) {
  const { repo, plan, searchAll, readPage, rank, write } = deps;

  /** The pipeline, on a claimed research; `step` records (and shows) each step it reaches. */
  return async function pipeline(row: ResearchRow, signal: AbortSignal, step: RecordStep) {
    const usage: LlmUsage = { prompt: 0, completion: 0 };
    const onUsage = (u: LlmUsage) => {
      usage.prompt += u.prompt;
      usage.completion += u.completion;
    };
    // The model's calls wait their turn when it is busy: the card says so meanwhile.
    const ask = (stage: ResearchStep, progress: ResearchProgress): ModelAsk => ({
      onUsage,
      userId: row.userId,
      onWait: (waiting) => void step(stage, waiting ? { ...progress, waitingForModel: true } : progress),
    });
    const brief = row.origin === 'daily';
    const queries = await plan(row.query, ask('planning', {}), signal, brief ? BRIEF.planned : MAX_PLANNED);
    // Recorded before anything reaches the search provider: a research cancelled meanwhile stops here.
    await step('searching', { queries });
    signal.throwIfAborted();
    const found = await searchAll(queries, signal, brief ? BRIEF.pages : RESEARCH_MAX_PAGES);
    if (!found.length) throw new ResearchFailure(FAILURES.noResults, false);
    let finished = 0;
    const reading = () => void step('reading', { queries, pagesDone: finished, pagesTotal: found.length });
    reading();
    const read = (
      await Promise.all(
        found.map((r) =>
          readPage(r.url, signal).finally(() => {
            finished++;
            reading();
          }),
        ),
      )
    ).filter((p) => p !== null);
    const counts = { found: found.length, read: read.length, failed: found.length - read.length };
    await repo.counts(row.id, counts);
    if (!read.length) throw new ResearchFailure(FAILURES.nothingRead(found.length), false);

    const chunks: Chunk[] = read.flatMap((page, p) =>
      chunkText(page.markdown).map((text, index) => ({ page: p, index, text })),
    );
    const order = await rank([row.query, ...queries].join(' '), chunks, signal);
    const chosen = selectChunks(chunks, order);
    const pages = read
      .map((page, p) => ({
        url: page.url,
        title: page.title,
        chunks: chosen.filter((c) => c.page === p).map((c) => c.text),
      }))
      .filter((page) => page.chunks.length);
    const writing = { queries, pagesDone: read.length, pagesTotal: found.length };
    void step('writing', writing);
    const report = await write(row.query, pages, ask('writing', writing), signal);
    const done = await repo.complete(row.id, { ...report, counts, usage });
    if (done) await deps.deliver(done);
  };
}

export type Pipeline = ReturnType<typeof createPipeline>;
