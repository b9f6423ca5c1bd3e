// The settings that point Daybook at the local fake providers, for tests that start it.
import type { FakeOpenAI } from './fake-openai.ts';
import type { FakeSearch } from './fake-search.ts';

/** The fake model, without retries: a failure shows at once. */
export const fakeModelEnv = (fake: FakeOpenAI) => ({
  LLM_BASE_URL: fake.baseUrl,
  LLM_MODEL: 'fake-model',
  LLM_MAX_RETRIES: '0',
});

/** The fake model and the fake SearXNG, with the safe fetcher let through to the local pages (127.0.0.1). */
export const fakeResearchEnv = (fake: FakeOpenAI, search: FakeSearch) => ({
  ...fakeModelEnv(fake),
  SEARXNG_URL: search.searxngUrl,
  SEARCH_PROVIDERS: 'searxng',
  FETCH_ALLOW: '127.0.0.1',
});
