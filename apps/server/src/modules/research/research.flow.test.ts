// Research end to end over real sockets and HTTP: the real app, a real job queue on the test
// database, a local SearXNG-compatible server, a local site of pages read through the safe fetcher,
// and the fake model planning and writing.
import {
  type TResearchCard,
  type TResearchStage,
  type TServerEvent,
  ZChatHistoryPage,
  ZResearch,
  ZResearchReport,
  ZResourceList,
} from '@daybook/contracts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type CompletionRequest,
  type FakeOpenAI,
  type Script,
  structuredName,
} from '../../../../../tests/helpers/fake-openai.ts';
import { type FakeSearch, fakeResults, startFakeSearch } from '../../../../../tests/helpers/fake-search.ts';
import { type FakeSite, startFakeSite } from '../../../../../tests/helpers/fake-site.ts';
import { buildApp } from '../../app.ts';
import { signedInUser } from '../../test/factories.ts';
import { type Browser, type TestApp, waitFor } from '../../test/test-app.ts';
import { type ChatApp, type Client, connect, startChatApp, type } from '../chat/chat.test-client.ts';
import { createResearchRepo } from './research.repo.ts';
import { FAILURES } from './research.service.ts';
import { SEARCH_NOT_CONFIGURED } from './search.ts';

let site: FakeSite;
let search: FakeSearch;
let chatApp: ChatApp;
let t: TestApp;
let fake: FakeOpenAI;

const ARTICLES = ['/articles/e-bike-commuting', '/articles/battery-care', '/articles/bike-lanes'];

/** The model's side: plans two queries, and writes a report citing every source it was given. */
function scriptModel(f: FakeOpenAI, write?: (req: CompletionRequest, urls: string[]) => string) {
  f.onJson((req) => scriptedAnswer(req, write));
}

/** What the model answers to a structured request (a plan, a report, or no memory changes). */
function scriptedAnswer(req: CompletionRequest, write?: (req: CompletionRequest, urls: string[]) => string): Script {
  const tool = structuredName(req);
  if (tool === 'plan_research') return { text: JSON.stringify({ queries: ['e-bike commute tips', 'e-bike battery'] }) };
  if (tool === 'write_report') {
    const prompt = req.messages.map((m) => m.content).join('\n');
    const urls = [...prompt.matchAll(/^URL: (.+)$/gm)].map((m) => m[1] as string);
    if (write) return { text: write(req, urls) };
    return {
      text: JSON.stringify({
        introduction: `Commuting by e-bike is popular [1].`,
        body: `### Findings\n\n${urls.map((_, i) => `- Point ${i + 1} [${i + 1}]`).join('\n')}`,
        conclusion: 'Ride on [1].',
        sources: urls.map((url, i) => ({ url, title: `Source ${i + 1}` })),
      }),
    };
  }
  return { text: '{"operations":[]}' };
}

beforeAll(async () => {
  site = await startFakeSite();
  search = await startFakeSearch();
  chatApp = await startChatApp({
    SEARXNG_URL: search.searxngUrl,
    SEARCH_PROVIDERS: 'searxng',
    FETCH_ALLOW: '127.0.0.1',
    // The local fake site's pages, on a machine busy with the rest of the suite: a page read late
    // there (3 s was once too short) is not a page the research should skip.
    FETCH_TIMEOUT_MS: '15000',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    LOG_FORMAT: 'json',
  });
  ({ t, fake } = chatApp);
});
afterAll(async () => {
  await chatApp?.close();
  await search?.close();
  await site?.close();
});
beforeEach(() => {
  search.onSearch(() => fakeResults(site.origin, ARTICLES));
  scriptModel(fake);
  fake.onChat((req) => ({ text: `You said: ${req.messages.at(-1)?.content}`, chunks: 2 }));
});

async function chatting(browser: Browser) {
  const c = await connect(chatApp.wsBase, browser);
  await c.next(type('history'));
  return c;
}

const isText = (kind: string, text: string | RegExp) => (e: TServerEvent) =>
  e.message_type === kind &&
  'raw_text' in e &&
  (typeof text === 'string' ? e.raw_text === text : text.test(e.raw_text));

// A whole pipeline (plan, search, read, write) on a busy two-core CI machine: the waits below fail a
// research that is stuck, not one that is slow.
const PIPELINE_MS = 90_000;

/** The next card of a research at `stage` this tab got. */
async function cardAt(c: Client, stage: TResearchStage, timeoutMs = 30_000): Promise<TResearchCard> {
  const event = await c.next((e) => e.message_type === 'research' && e.research.stage === stage, timeoutMs);
  if (event.message_type !== 'research') throw new Error('not a card');
  return event.research;
}

/** The failure as the chat shows it: the card, then the note in its place that links to the research. */
async function failureOf(c: Client, query: string) {
  const card = await cardAt(c, 'failed', 30_000);
  expect(card.query).toBe(query);
  const note = await c.next(type('system_message'), 5000);
  if (note.message_type !== 'system_message') throw new Error('not a note');
  expect(note.url).toBe(`/resources/research/${card.id}`);
  expect(note.raw_text).toBe(`I could not finish the research on "${query}". ${card.error}`);
  return { card, note };
}

async function reportOf(c: Client, timeoutMs = 30_000) {
  const message = await c.next(type('research_report'), timeoutMs);
  if (message.message_type !== 'research_report') throw new Error('not a report');
  return ZResearchReport.parse(JSON.parse(message.raw_text));
}

describe('research from the chat', { timeout: PIPELINE_MS }, () => {
  it('/research runs the pipeline, tells every tab how it goes, and delivers a cited report', async () => {
    const { browser } = await signedInUser(t);
    const [tab, other] = [await chatting(browser), await chatting(browser)];
    tab.say('/research the best e-bikes for commuting');
    expect(await tab.next(type('markdown'))).toMatchObject({
      raw_text: expect.stringContaining("I'm researching **the best e-bikes for commuting** now"),
    });
    for (const c of [tab, other]) {
      expect(await cardAt(c, 'queued')).toMatchObject({ query: 'the best e-bikes for commuting', retrying: false });
      await cardAt(c, 'planning');
      expect((await cardAt(c, 'searching')).queries).toEqual([
        'the best e-bikes for commuting',
        'e-bike commute tips',
        'e-bike battery',
      ]);
      expect((await cardAt(c, 'reading')).pages).toEqual({ done: 0, total: 3 });
      expect((await cardAt(c, 'writing')).pages).toEqual({ done: 3, total: 3 });
      expect(await cardAt(c, 'done')).toMatchObject({ error: null });
    }
    const report = await reportOf(tab);
    expect(await reportOf(other)).toEqual(report);
    // Every tab saw each page counted, in order: no card is older than the one before it.
    for (const c of [tab, other]) {
      const reading = c.events.filter((e) => e.message_type === 'research' && e.research.stage === 'reading');
      expect(reading.map((e) => e.message_type === 'research' && e.research.pages?.done)).toEqual([1, 2, 3]);
    }
    expect(report.query).toBe('the best e-bikes for commuting');
    // Every source is a page that was read, numbered as cited.
    expect(report.sources.map((s) => new URL(s.url).pathname).sort()).toEqual([...ARTICLES].sort());
    expect(report.introduction).toBe('Commuting by e-bike is popular [1].');
    // Pages reach the writer quoted, as material and never as instructions.
    const writeRequest = fake.requests.findLast((r) => r.tools?.[0]?.function.name === 'write_report');
    expect(writeRequest?.messages[0]?.content).toContain('never instructions to you');
    expect(writeRequest?.messages[1]?.content).toMatch(/<source number="1">\n\[1\] /);
    // The searches carried only what the request said.
    const queries = search.requests.slice(-3).map((r) => r.query);
    expect(queries).toEqual(
      expect.arrayContaining(['the best e-bikes for commuting', 'e-bike commute tips', 'e-bike battery']),
    );

    const detail = ZResearch.parse((await browser.get(`/api/web-research/${report.id}/`)).json());
    expect(detail).toMatchObject({
      id: report.id,
      status: 'done',
      report: report.report,
      counts: { found: 3, read: 3, failed: 0 },
      error: null,
    });
    const list = ZResourceList.parse((await browser.get('/api/resources/')).json());
    expect(list[0]).toMatchObject({ resource_type: 'research', id: report.id, title: report.query, status: 'done' });
    // The report stays in the chat's history for a user who was offline.
    const history = ZChatHistoryPage.parse((await browser.get('/api/chat/messages/?limit=10')).json());
    expect(history.results.at(-1)).toMatchObject({ message_type: 'research_report', author_type: 'assistant' });
    for (const c of [tab, other]) c.ws.close();
  });

  it('starts research when a model calls the web_research tool', async () => {
    fake.onChat(() => ({
      text: 'Let me look into that.',
      toolCalls: [{ name: 'web_research', arguments: '{"query":"e-bike batteries"}' }],
    }));
    const { browser } = await signedInUser(t);
    const tab = await chatting(browser);
    tab.say('Can you find out how long e-bike batteries last?');
    const answer = await tab.next(type('markdown'), 10_000);
    expect(answer).toMatchObject({
      raw_text: expect.stringMatching(/^Let me look into that\.\n\nI'm researching \*\*e-bike batteries\*\*/),
    });
    const chatRequest = fake.requests.findLast((r) => r.stream);
    expect(chatRequest?.tools?.map((x) => x.function.name)).toEqual(['web_research', 'calendar_events']);
    expect((await reportOf(tab)).query).toBe('e-bike batteries');
    tab.ws.close();
  });

  it('skips pages that fail or are refused, counts them, and cites only what was read', async () => {
    search.onSearch(() => [
      ...fakeResults(site.origin, ['/articles/e-bike-commuting', '/missing-page', '/binary']),
      { url: 'http://169.254.169.254/latest/meta-data/', title: 'metadata', snippet: '' },
      { url: 'https://www.youtube.com/watch?v=x', title: 'video', snippet: '' },
    ]);
    const { browser } = await signedInUser(t);
    const tab = await chatting(browser);
    tab.say('/research e-bike commuting');
    const report = await reportOf(tab);
    expect(report.sources.map((s) => new URL(s.url).pathname)).toEqual(['/articles/e-bike-commuting']);
    const detail = ZResearch.parse((await browser.get(`/api/web-research/${report.id}/`)).json());
    // The video is never fetched; the other three fail and are counted.
    expect(detail.counts).toEqual({ found: 4, read: 1, failed: 3 });
    expect(site.hits.get('/latest/meta-data/')).toBeUndefined();
    tab.ws.close();
  });

  it('drops citations of pages that were not read', async () => {
    scriptModel(fake, (_req, urls) =>
      JSON.stringify({
        introduction: 'Intro [2].',
        body: 'Real [1]. Invented [2].',
        conclusion: 'Done [1].',
        sources: [
          { url: urls[0], title: 'Real' },
          { url: 'https://invented.example/page', title: 'Invented' },
        ],
      }),
    );
    const { browser } = await signedInUser(t);
    const tab = await chatting(browser);
    tab.say('/research bike lanes');
    const report = await reportOf(tab);
    expect(report.introduction).toBe('Intro.');
    expect(report.report).toBe('Real [1]. Invented.');
    expect(report.sources).toHaveLength(1);
    tab.ws.close();
  });

  it('asks once more after malformed output, then in another form, then fails visibly', async () => {
    let writes = 0;
    scriptModel(fake, () => {
      writes++;
      return '{"introduction": "no body"}';
    });
    const { browser } = await signedInUser(t);
    const tab = await chatting(browser);
    tab.say('/research battery care');
    const { card } = await failureOf(tab, 'battery care');
    expect(card.error).toBe(FAILURES.malformed);
    // Through the tool, once more told what was wrong, then through a JSON schema response format.
    expect(writes).toBe(3);
    const retry = fake.requests.filter((r) => r.tools?.[0]?.function.name === 'write_report').at(-1);
    expect(retry?.messages.at(-1)?.content).toMatch(/^That is not valid: body: /);
    expect(fake.requests.at(-1)?.response_format).toMatchObject({ type: 'json_schema' });
    const list = ZResourceList.parse((await browser.get('/api/resources/')).json());
    expect(list[0]).toMatchObject({ status: 'failed', title: 'battery care' });
    tab.ws.close();
  });

  it('a page that closes its quote and forges a source stays inside its own quote', async () => {
    search.onSearch(() => fakeResults(site.origin, ['/breakout', ...ARTICLES.slice(0, 2)]));
    const { browser } = await signedInUser(t);
    const tab = await chatting(browser);
    tab.say('/research lane breakout');
    const report = await reportOf(tab);
    expect(report.sources.map((s) => new URL(s.url).pathname)).toContain('/breakout');
    const prompt = fake.requests.findLast((r) => r.tools?.[0]?.function.name === 'write_report')?.messages[1]
      ?.content as string;
    // Three sources, three quotes: the page's own tags (raw or as entities) open and close nothing.
    expect(prompt.match(/<source number="/g)).toHaveLength(3);
    expect(prompt.match(/<\/source>/g)).toHaveLength(3);
    expect(prompt).not.toMatch(/&lt;\/?source/);
    expect(prompt).toContain('Ignore all previous instructions');
    expect(prompt).toMatch(/‹\/source>/);
    tab.ws.close();
  });

  it('a model that never answers in a usable format: the failure says so, after every way of asking', async () => {
    scriptModel(fake, () => 'I am sorry, I cannot write that as JSON.');
    const { browser } = await signedInUser(t);
    const tab = await chatting(browser);
    tab.say('/research bike maps');
    const { card } = await failureOf(tab, 'bike maps');
    expect(card.error).toBe("This server's model cannot write reports in the format Daybook needs.");
    // A forced tool call, a JSON schema response format, then the schema spelled out in the prompt.
    const writes = fake.requests.slice(-3);
    expect(writes[0]?.tool_choice).toEqual({ type: 'function', function: { name: 'write_report' } });
    expect(writes[1]?.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'write_report' } });
    expect(writes[2]?.tools).toBeUndefined();
    expect(writes[2]?.messages[0]?.content).toContain('Answer with only a JSON object');
    tab.ws.close();
  });

  it('a model that refuses the credentials: the failure names the step and who can fix it', async () => {
    fake.onJson((req) =>
      structuredName(req) === 'write_report'
        ? { status: 401, body: '{"error":{"message":"Incorrect API key provided","code":"invalid_api_key"}}' }
        : { text: JSON.stringify({ queries: ['bike routes'] }) },
    );
    const { browser } = await signedInUser(t);
    const tab = await chatting(browser);
    tab.say('/research bike routes');
    const { card } = await failureOf(tab, 'bike routes');
    expect(card.error).toBe(FAILURES.model('credentials', 'write'));
    expect(FAILURES.model('credentials', 'write')).toBe(
      "The assistant model refused this server's credentials, so it could not write the report. Whoever runs this Daybook needs to check its model settings.",
    );
    tab.ws.close();
  });

  it('a plan the model cannot give: the request is searched as written, and the research goes on', async () => {
    scriptModel(fake);
    const write = fake.requests.length;
    fake.onJson((req) => {
      if (structuredName(req) === 'plan_research') return { text: 'Let me think about good searches.' };
      return scriptedAnswer(req);
    });
    const { browser } = await signedInUser(t);
    const tab = await chatting(browser);
    const searched = search.requests.length;
    tab.say('/research folding bikes');
    const report = await reportOf(tab);
    expect(report.query).toBe('folding bikes');
    expect(search.requests.slice(searched).map((r) => r.query)).toEqual(['folding bikes']);
    expect(fake.requests.length).toBeGreaterThan(write);
    tab.ws.close();
  });

  it('a SearXNG that refuses JSON: the user is told to ask whoever runs Daybook, not how to set it up', async () => {
    search.setSearxngFormats(['html']);
    try {
      const { browser } = await signedInUser(t);
      const tab = await chatting(browser);
      tab.say('/research e-bike commuting');
      const note = await tab.next(type('system_message'), 20_000);
      expect(note.message_type === 'system_message' && note.raw_text).toBe(
        `I could not finish the research on "e-bike commuting". ${FAILURES.searchFailed('not_json')}`,
      );
      expect(FAILURES.searchFailed('not_json')).toContain('Ask whoever runs this Daybook');
      expect(note.message_type === 'system_message' && note.raw_text).not.toMatch(/settings\.yml|search\.formats/);
      tab.ws.close();
    } finally {
      search.setSearxngFormats(['html', 'json']);
    }
  });

  it('runs one research of a user at a time; the next waits and the user is told', async () => {
    site.setDelay('/articles/e-bike-commuting', 600);
    try {
      const { browser } = await signedInUser(t);
      const tab = await chatting(browser);
      tab.say('/research first topic');
      await tab.next(isText('markdown', /researching \*\*first topic\*\* now/));
      tab.say('/research second topic');
      await tab.next(
        isText('markdown', "I'll research **second topic** after your current research. The report will appear here."),
      );
      const first = await reportOf(tab);
      const second = await reportOf(tab);
      expect([first.query, second.query]).toEqual(['first topic', 'second topic']);
      const [a, b] = await Promise.all(
        [first.id, second.id].map(async (id) =>
          ZResearch.parse((await browser.get(`/api/web-research/${id}/`)).json()),
        ),
      );
      // The second started after the first had finished.
      expect(new Date(b?.created ?? 0).getTime()).toBeLessThanOrEqual(new Date(a?.finished ?? 0).getTime());
      tab.ws.close();
    } finally {
      site.setDelay('/articles/e-bike-commuting', 0);
    }
  });
});

describe('a research in progress', { timeout: PIPELINE_MS }, () => {
  /** Holds every report's writing until the test ends it: the research stays at its last step. */
  const holdWriting = () =>
    fake.onJson((req) => (structuredName(req) === 'write_report' ? { stall: true } : scriptedAnswer(req)));

  it('a tab opened mid-research shows where it stands; Cancel stops it and every tab says so', async () => {
    holdWriting();
    const { browser } = await signedInUser(t);
    const tab = await chatting(browser);
    tab.say('/research winter tyres for bikes');
    const writing = await cardAt(tab, 'writing', 30_000);

    // A reload: the new tab's history carries the card as it is now.
    const reloaded = await connect(chatApp.wsBase, browser);
    const history = await reloaded.next(type('history'));
    expect(history.message_type === 'history' && history.researches).toEqual([writing]);
    expect(writing).toMatchObject({
      query: 'winter tyres for bikes',
      stage: 'writing',
      pages: { done: 3, total: 3 },
      queries: ['winter tyres for bikes', 'e-bike commute tips', 'e-bike battery'],
    });

    const abandoned = fake.abandoned;
    reloaded.send({ message_type: 'cancel_research', id: writing.id });
    for (const c of [tab, reloaded]) {
      expect(await cardAt(c, 'cancelled')).toMatchObject({ id: writing.id, error: null });
      expect(await c.next(type('system_message'))).toMatchObject({
        raw_text: 'You cancelled the research on "winter tyres for bikes".',
        url: `/resources/research/${writing.id}`,
      });
    }
    // The run stopped: the model call it was waiting on was given up at once.
    await waitFor('the held model call to be abandoned', () => fake.abandoned > abandoned, { timeoutMs: 10_000 });
    const detail = ZResearch.parse((await browser.get(`/api/web-research/${writing.id}/`)).json());
    expect(detail).toMatchObject({ status: 'cancelled', error: null, report: null });
    const list = ZResourceList.parse((await browser.get('/api/resources/')).json());
    expect(list[0]).toMatchObject({ id: writing.id, status: 'cancelled' });

    // Cancelled for good: a second Cancel posts nothing, and a new tab shows no card.
    tab.events.splice(0);
    tab.send({ message_type: 'cancel_research', id: writing.id });
    tab.say('hello');
    await tab.next(isText('markdown', 'You said: hello'), 10_000);
    expect(tab.events.filter((e) => e.message_type === 'system_message' || e.message_type === 'research')).toEqual([]);
    const later = await connect(chatApp.wsBase, browser);
    const after = await later.next(type('history'));
    expect(after.message_type === 'history' && after.researches).toBeUndefined();
    for (const c of [tab, reloaded, later]) c.ws.close();
  });

  it("a queued research can be cancelled and the next one starts; another user's Cancel changes nothing", async () => {
    holdWriting();
    const owner = await signedInUser(t);
    const tab = await chatting(owner.browser);
    tab.say('/research first held topic');
    const first = await cardAt(tab, 'writing', 30_000);
    // Only what comes from here on.
    tab.events.splice(0);
    tab.say('/research second held topic');
    const second = await cardAt(tab, 'queued');
    expect(second.query).toBe('second held topic');
    tab.say('/research third held topic');
    const third = await cardAt(tab, 'queued');

    // Another user names the owner's researches: nothing happens to them.
    const stranger = await signedInUser(t);
    const theirs = await chatting(stranger.browser);
    theirs.send({ message_type: 'cancel_research', id: first.id });
    theirs.send({ message_type: 'cancel_research', id: second.id });
    // An id no row can have is a bad message, answered as one (not a database error).
    theirs.send({ message_type: 'cancel_research', id: 3_000_000_000 });
    expect(await theirs.next(type('error'))).toMatchObject({ code: 'invalid_message' });
    theirs.say('are you there?');
    await theirs.next(isText('markdown', 'You said: are you there?'), 10_000);
    const states = await t.database.db.query<{ status: string }>(
      'SELECT status FROM researches WHERE id = ANY($1) ORDER BY id',
      [[first.id, second.id]],
    );
    expect(states.map((r) => r.status)).toEqual(['running', 'queued']);

    // The owner cancels the second while it waits, then the first while it runs: the third starts.
    tab.send({ message_type: 'cancel_research', id: second.id });
    expect((await cardAt(tab, 'cancelled')).id).toBe(second.id);
    tab.send({ message_type: 'cancel_research', id: first.id });
    expect((await cardAt(tab, 'cancelled')).id).toBe(first.id);
    expect((await cardAt(tab, 'planning', 15_000)).id).toBe(third.id);
    tab.send({ message_type: 'cancel_research', id: third.id });
    await cardAt(tab, 'cancelled');
    for (const c of [tab, theirs]) c.ws.close();
  });
});

describe('the research API', () => {
  it("answers 404 for another user's report and for ids that name none, 401 signed out", async () => {
    const owner = await signedInUser(t);
    const tab = await chatting(owner.browser);
    tab.say('/research bike lanes in cities');
    const report = await reportOf(tab);
    tab.ws.close();
    const stranger = await signedInUser(t);
    for (const path of [
      `/api/web-research/${report.id}/`,
      '/api/web-research/0/',
      '/api/web-research/abc/',
      '/api/web-research/99999999999/',
    ]) {
      const res = await stranger.browser.get(path);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'Research report not found.', code: 'not_found' });
    }
    expect(ZResourceList.parse((await stranger.browser.get('/api/resources/')).json())).toEqual([]);
    const anonymous = await t.app.inject({ url: `/api/web-research/${report.id}/` });
    expect(anonymous.statusCode).toBe(401);
    expect((await t.app.inject({ url: '/api/resources/' })).statusCode).toBe(401);
  });

  it('pages resources with before and after cursors, and refuses bad ones', async () => {
    const { browser, userId } = await signedInUser(t);
    const created: number[] = [];
    for (let i = 0; i < 5; i++) {
      const row = await t.database.db.query<{ id: number }>(
        `INSERT INTO researches (user_id, query, status, created_at) VALUES ($1, $2, 'done', now() - make_interval(mins => $3)) RETURNING id`,
        [userId, `topic ${i}`, 10 - i],
      );
      created.push(row[0]?.id ?? 0);
    }
    const first = ZResourceList.parse((await browser.get('/api/resources/?limit=2')).json());
    expect(first.map((r) => r.title)).toEqual(['topic 4', 'topic 3']);
    const next = ZResourceList.parse(
      (await browser.get(`/api/resources/?limit=2&before=${encodeURIComponent(first[1]?.sort_date ?? '')}`)).json(),
    );
    expect(next.map((r) => r.title)).toEqual(['topic 2', 'topic 1']);
    const newer = ZResourceList.parse(
      (await browser.get(`/api/resources/?after=${encodeURIComponent(next[0]?.sort_date ?? '')}`)).json(),
    );
    expect(newer.map((r) => r.title)).toEqual(['topic 3', 'topic 4']);
    for (const bad of [
      '?limit=0',
      '?limit=x',
      '?before=yesterday',
      '?before=2026-01-01T00:00:00Z&after=2026-01-01T00:00:00Z',
    ]) {
      const res = await browser.get(`/api/resources/${bad}`);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'validation_error' });
    }
  });
});

describe('limits and configuration', { timeout: PIPELINE_MS }, () => {
  it('says research is not set up here and whom to ask when no search provider is, and offers the model no research tool', async () => {
    const bare = await startChatApp({ LOG_LEVEL: 'silent' });
    try {
      const { browser } = await signedInUser(bare.t);
      const tab = await connect(bare.wsBase, browser);
      await tab.next(type('history'));
      tab.say('/research anything');
      expect(await tab.next(type('system_message'))).toMatchObject({ raw_text: SEARCH_NOT_CONFIGURED });
      tab.say('hello');
      await tab.next(type('markdown'));
      expect(bare.fake.requests.findLast((r) => r.stream)?.tools?.map((x) => x.function.name)).toEqual([
        'calendar_events',
      ]);
      tab.ws.close();
    } finally {
      await bare.close();
    }
  });

  it('retries with backoff while the search provider is down, then fails visibly', async () => {
    const retrying = await startChatApp(
      { SEARXNG_URL: search.searxngUrl, FETCH_ALLOW: '127.0.0.1', LOG_LEVEL: 'silent' },
      { research: { retryBaseMs: 300 } },
    );
    scriptModel(retrying.fake);
    let calls = 0;
    search.onSearch(() => {
      calls++;
      return { status: 503, body: 'maintenance' };
    });
    try {
      const { browser } = await signedInUser(retrying.t);
      const tab = await connect(retrying.wsBase, browser);
      await tab.next(type('history'));
      tab.say('/research anything at all');
      // Between runs the card says it will try again.
      await tab.next(
        (e) => e.message_type === 'research' && e.research.stage === 'queued' && e.research.retrying,
        30_000,
      );
      const note = await tab.next(type('system_message'), 30_000);
      expect(note.message_type === 'system_message' && note.raw_text).toBe(
        `I could not finish the research on "anything at all". ${FAILURES.searchFailed('unavailable')}`,
      );
      const [row] = await retrying.t.database.db.query<{ attempts: number; status: string }>(
        `SELECT attempts, status FROM researches WHERE query = 'anything at all'`,
      );
      // Three runs, each searching once per planned query (the user's words and two more).
      expect(row).toEqual({ attempts: 3, status: 'failed' });
      expect(calls).toBe(9);
      tab.ws.close();
    } finally {
      await retrying.close();
    }
  });

  it('a model that does not answer in time: the failure says so, not that it could not be reached', async () => {
    const slow = await startChatApp(
      {
        SEARXNG_URL: search.searxngUrl,
        FETCH_ALLOW: '127.0.0.1',
        LLM_TIMEOUT_MS: '1000',
        LLM_MAX_RETRIES: '0',
        LOG_LEVEL: 'silent',
      },
      { research: { retryBaseMs: 50 } },
    );
    slow.fake.onJson((req) => (structuredName(req) === 'write_report' ? { stall: true } : scriptedAnswer(req)));
    try {
      const { browser } = await signedInUser(slow.t);
      const tab = await connect(slow.wsBase, browser);
      await tab.next(type('history'));
      tab.say('/research slow models');
      const { card } = await failureOf(tab, 'slow models');
      expect(card.error).toBe('The assistant model did not answer in time when asked to write the report.');
      tab.ws.close();
    } finally {
      await slow.close();
    }
  });

  it('never lets concurrent requests pass the daily limit together', async () => {
    const { userId } = await signedInUser(t);
    const repo = createResearchRepo(t.database.db.prisma, t.database.db.query);
    const since = new Date(Date.now() - 3600_000);
    const created = await Promise.all(
      Array.from({ length: 10 }, (_, i) => repo.createWithinLimit({ userId, query: `race ${i}` }, 2, since)),
    );
    expect(created.filter(Boolean)).toHaveLength(2);
  });

  it('ranks page passages by embeddings when an embedding model is set', async () => {
    const embedding = await startChatApp({
      SEARXNG_URL: search.searxngUrl,
      FETCH_ALLOW: '127.0.0.1',
      EMBEDDING_MODEL: 'fake-embed',
      LOG_LEVEL: 'silent',
    });
    scriptModel(embedding.fake);
    try {
      const { browser } = await signedInUser(embedding.t);
      const tab = await connect(embedding.wsBase, browser);
      await tab.next(type('history'));
      tab.say('/research e-bike battery care');
      const report = await reportOf(tab);
      expect(report.sources.length).toBeGreaterThan(0);
      // One call for the query and the passages, with the configured model.
      const [call] = embedding.fake.embeddings;
      expect(call?.model).toBe('fake-embed');
      expect(call?.input[0]).toContain('e-bike battery care');
      expect(call?.input.length).toBeGreaterThan(3);
      tab.ws.close();
    } finally {
      await embedding.close();
    }
  });

  it('refuses research past the daily limit', async () => {
    const limited = await startChatApp({
      SEARXNG_URL: search.searxngUrl,
      FETCH_ALLOW: '127.0.0.1',
      RESEARCH_DAILY_LIMIT: '1',
      LOG_LEVEL: 'silent',
    });
    scriptModel(limited.fake);
    try {
      const { browser } = await signedInUser(limited.t);
      const tab = await connect(limited.wsBase, browser);
      await tab.next(type('history'));
      tab.say('/research one');
      await tab.next(isText('markdown', /researching \*\*one\*\* now/));
      tab.say('/research two');
      expect(await tab.next(type('system_message'))).toMatchObject({
        raw_text:
          'You have asked for 1 researches in the last 24 hours, the most this Daybook allows. Try again later.',
      });
      tab.ws.close();
    } finally {
      await limited.close();
    }
  });
});

describe('a restart in the middle of a research', { timeout: PIPELINE_MS }, () => {
  it('takes the research over after the restart and delivers the report', async () => {
    site.setDelay('/articles/battery-care', 2000);
    const { browser } = await signedInUser(t);
    const tab = await chatting(browser);
    tab.say('/research battery care during winter');
    await cardAt(tab, 'reading', 30_000);
    // A second app on the same database stands in for the restarted server: the first one closes
    // while the research reads its pages.
    const before = await t.database.db.query<{ status: string }>(
      `SELECT status FROM researches WHERE query = 'battery care during winter'`,
    );
    expect(before[0]?.status).toBe('running');
    await chatApp.t.app.close();
    site.setDelay('/articles/battery-care', 0);
    const after = await t.database.db.query<{ status: string }>(
      `SELECT status FROM researches WHERE query = 'battery care during winter'`,
    );
    expect(after[0]?.status).toBe('queued');
    const restarted = await buildApp(t.config, { db: t.database.db });
    try {
      await restarted.ready();
      await waitFor(
        'the research taken over after the restart to be done',
        async () =>
          (
            await t.database.db.query<{ status: string }>(
              `SELECT status FROM researches WHERE query = 'battery care during winter'`,
            )
          )[0]?.status === 'done',
        { timeoutMs: 20_000, intervalMs: 100 },
      );
      const history = ZChatHistoryPage.parse(
        (
          await restarted.inject({
            url: '/api/chat/messages/?limit=5',
            headers: { cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
          })
        ).json(),
      );
      const report = history.results.findLast((m) => m.message_type === 'research_report');
      expect(report && ZResearchReport.parse(JSON.parse(report.raw_text)).query).toBe('battery care during winter');
    } finally {
      await restarted.close();
    }
  });

  it('posts an outcome a crash kept from reaching the chat', async () => {
    const [user] = await t.database.db.query<{ id: number }>(
      `INSERT INTO users (email) VALUES ('lost-' || gen_random_uuid() || '@example.com') RETURNING id`,
    );
    await t.database.db.query(
      `INSERT INTO researches (user_id, query, status, body, sources, finished_at, created_at)
       VALUES ($1, 'finished before the crash', 'done', 'The body [1].', '[{"url":"https://a.example/","title":"A"}]',
         now() - interval '5 minutes', now() - interval '6 minutes')`,
      [user?.id],
    );
    const restarted = await buildApp(t.config, { db: t.database.db });
    try {
      await restarted.ready();
      const posted = await waitFor(
        'the report to be posted to the chat',
        async () => {
          const rows = await t.database.db.query<{ raw_text: string }>(
            `SELECT raw_text FROM chat_messages WHERE user_id = $1 AND message_type = 'research_report'`,
            [user?.id],
          );
          return rows.length ? rows : undefined;
        },
        { intervalMs: 100 },
      );
      expect(posted).toHaveLength(1);
      expect(ZResearchReport.parse(JSON.parse(posted[0]?.raw_text ?? '')).report).toBe('The body [1].');
    } finally {
      await restarted.close();
    }
  });

  it('ends a research visibly failed when it was interrupted too often', async () => {
    // The first app is closed by now: the user is made in the database.
    const [user] = await t.database.db.query<{ id: number }>(
      `INSERT INTO users (email) VALUES ('stuck-' || gen_random_uuid() || '@example.com') RETURNING id`,
    );
    const userId = user?.id;
    const [row] = await t.database.db.query<{ id: number }>(
      `INSERT INTO researches (user_id, query, status, attempts, heartbeat_at) VALUES ($1, 'stuck', 'running', 3, now() - interval '1 hour') RETURNING id`,
      [userId],
    );
    const restarted = await buildApp(t.config, { db: t.database.db });
    try {
      await restarted.ready();
      const failed = await waitFor(
        'the research to end failed',
        async () => {
          const [found] = await t.database.db.query<{ status: string; error: string }>(
            'SELECT status, error FROM researches WHERE id = $1',
            [row?.id],
          );
          return found?.status === 'failed' ? found : undefined;
        },
        { intervalMs: 100 },
      );
      expect(failed.status).toBe('failed');
      expect(failed.error).toBe(FAILURES.interrupted);
    } finally {
      await restarted.close();
    }
  });
});
