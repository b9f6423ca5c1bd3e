// GET /api/chat/search/ against the real app and database.
import { CHAT_SEARCH_TEXT_REQUIRED, CHAT_SEARCH_TEXT_TOO_LONG, ZApiError, ZChatSearchPage } from '@daybook/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedInUser } from '../../test/factories.ts';
import { Browser, createTestApp, type TestApp } from '../../test/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const S = '/api/chat/search/';

interface Seed {
  text: string;
  author?: 'human' | 'assistant' | 'system';
  type?: string;
  channel?: 'chat' | 'onboarding';
}

/** Stores messages in order (oldest first) and returns their ids. */
async function seed(userId: number, messages: Seed[]): Promise<number[]> {
  const ids: number[] = [];
  for (const m of messages) {
    const [row] = await t.database.db.query<{ id: number }>(
      `INSERT INTO chat_messages (user_id, channel, author_type, message_type, raw_text)
       VALUES ($1, $2, $3, $4, $5) RETURNING id`,
      [userId, m.channel ?? 'chat', m.author ?? 'human', m.type ?? 'message', m.text],
    );
    ids.push(row?.id ?? 0);
  }
  return ids;
}

async function search(browser: Browser, params: Record<string, string>) {
  const res = await browser.get(`${S}?${new URLSearchParams(params)}`);
  expect(res.statusCode, res.body).toBe(200);
  return ZChatSearchPage.strict().parse(res.json());
}

const marked = (r: { snippet: string; highlights: Array<{ start: number; end: number }> }) =>
  r.highlights.map((h) => r.snippet.slice(h.start, h.end));

describe('GET /api/chat/search/', () => {
  it("finds the user's and the assistant's chat messages, newest first, with snippets", async () => {
    const { browser, userId } = await signedInUser(t);
    const ids = await seed(userId, [
      { text: 'I love the Café on Rua Augusta' },
      { text: 'The **cafe** you mentioned opens at 8.', author: 'assistant', type: 'markdown' },
      { text: 'Nothing to see here' },
      { text: 'onboarding: my favourite cafe', channel: 'onboarding' },
      { text: 'The answer about the cafe was interrupted.', author: 'system', type: 'system_message' },
      { text: '{"query":"cafe","report":"cafe"}', author: 'assistant', type: 'research_report' },
      { text: 'CAFÉ again, café' },
    ]);
    const page = await search(browser, { q: 'cafe' });
    expect(page.has_more).toBe(false);
    expect(page.results.map((r) => r.message_id)).toEqual([ids[6], ids[5], ids[1], ids[0]]);
    const [latest, report, markdown, first] = page.results;
    expect(latest).toMatchObject({ author_type: 'human', message_type: 'message', snippet: 'CAFÉ again, café' });
    expect(marked(latest as never)).toEqual(['CAFÉ', 'café']);
    expect(report).toMatchObject({ author_type: 'assistant', message_type: 'research_report', snippet: 'cafe' });
    expect(markdown).toMatchObject({ author_type: 'assistant', message_type: 'markdown' });
    expect(markdown?.snippet).toBe('The cafe you mentioned opens at 8.');
    expect(marked(markdown as never)).toEqual(['cafe']);
    expect(marked(first as never)).toEqual(['Café']);
    expect(Number.isNaN(Date.parse(first?.timestamp ?? ''))).toBe(false);
    // Accents in the search text, and surrounding white space, make no difference.
    expect((await search(browser, { q: '  CAFÉ ' })).results.map((r) => r.message_id)).toEqual([
      ids[6],
      ids[5],
      ids[1],
      ids[0],
    ]);
  });

  it('pages with limit and before, without overlap; 20 by default', async () => {
    const { browser, userId } = await signedInUser(t);
    const ids = await seed(
      userId,
      Array.from({ length: 25 }, (_, i) => ({ text: `note number ${i} about tides` })),
    );
    const newestFirst = [...ids].reverse();
    const first = await search(browser, { q: 'tides' });
    expect(first.results).toHaveLength(20);
    expect(first.has_more).toBe(true);
    const seen: number[] = [];
    let before: number | undefined;
    for (;;) {
      const page = await search(browser, { q: 'TIDES', limit: '10', ...(before ? { before: String(before) } : {}) });
      seen.push(...page.results.map((r) => r.message_id));
      if (!page.has_more) break;
      before = page.results.at(-1)?.message_id;
    }
    expect(seen).toEqual(newestFirst);
    expect((await search(browser, { q: 'tides', limit: '50' })).results).toHaveLength(25);
    // A page that ends exactly at the last match says there is no more.
    expect(await search(browser, { q: 'tides', limit: '25' })).toMatchObject({ has_more: false });
    expect(await search(browser, { q: 'tides', limit: '5', before: String(ids[5]) })).toMatchObject({
      has_more: false,
    });
  });

  it('takes LIKE wildcards and backslashes literally', async () => {
    const { browser, userId } = await signedInUser(t);
    const ids = await seed(userId, [
      { text: 'save 50% today' },
      { text: 'save 500 today' },
      { text: 'a_b here' },
      { text: 'axb here' },
      { text: 'path C:\\temp' },
    ]);
    expect((await search(browser, { q: '50%' })).results.map((r) => r.message_id)).toEqual([ids[0]]);
    expect((await search(browser, { q: 'a_b' })).results.map((r) => r.message_id)).toEqual([ids[2]]);
    expect((await search(browser, { q: '%' })).results.map((r) => r.message_id)).toEqual([ids[0]]);
    expect((await search(browser, { q: 'C:\\temp' })).results.map((r) => r.message_id)).toEqual([ids[4]]);
    // A text of accents alone folds to nothing: it matches nothing rather than everything.
    expect((await search(browser, { q: '\u0301\u0308' })).results).toEqual([]);
  });

  it('finds research reports by their readable text, never by their JSON, with a plain-text snippet', async () => {
    const { browser, userId } = await signedInUser(t);
    const report = (fields: Record<string, unknown>) => ({
      text: JSON.stringify({ id: 7, created: '2026-03-14T15:05:00.000Z', sources: [], ...fields }),
      author: 'assistant' as const,
      type: 'research_report',
    });
    const ids = await seed(userId, [
      report({
        query: 'tides in Lisbon',
        introduction: 'The **Tagus estuary** has "semidiurnal" tides,\ntwice a day.',
        report: '## Tables\n\nSee [the port](https://porto.example/tabelas) for the Marégrafo data.',
        conclusion: 'Check before sailing (tables in C:\\tides).',
        sources: [{ url: 'https://hidrografico.example/', title: 'Instituto Hidrográfico' }],
      }),
      // Cut short: not JSON, and not found (nor does it fail the search).
      { text: '{"query": "tides", "introduction": "The Tagus estuary', author: 'assistant', type: 'research_report' },
      { text: 'an introduction to sources, with {braces}' },
    ]);
    const find = async (q: string) => (await search(browser, { q })).results;
    const results = await find('TAGUS estuary');
    expect(results.map((r) => r.message_id)).toEqual([ids[0]]);
    const [found] = results;
    expect(found).toMatchObject({ message_id: ids[0], author_type: 'assistant', message_type: 'research_report' });
    expect(found?.snippet).toBe('The Tagus estuary has "semidiurnal" tides, twice a day.');
    expect(marked(found as never)).toEqual(['Tagus estuary']);
    // The query, the body (accents folded), the conclusion and a source's title find it too.
    for (const q of ['tides in lisbon', 'maregrafo', 'before sailing', 'hidrografico', '"semidiurnal"', 'c:\\tides']) {
      expect(
        (await find(q)).map((r) => r.message_id),
        q,
      ).toEqual([ids[0]]);
    }
    expect(marked((await find('maregrafo'))[0] as never)).toEqual(['Marégrafo']);
    expect((await find('hidrografico'))[0]?.snippet).toBe('Instituto Hidrográfico');
    // JSON keys, punctuation and other fields (id, dates, source addresses) find nothing in a report.
    for (const q of ['introduction', 'sources', '{', '":"', 'created', '2026-03', 'hidrografico.example']) {
      expect(
        (await find(q)).filter((r) => r.message_type === 'research_report'),
        q,
      ).toEqual([]);
    }
    expect((await find('{')).map((r) => r.message_id)).toEqual([ids[2]]);
  });

  it("never shows another user's messages", async () => {
    const alice = await signedInUser(t);
    const bob = await signedInUser(t);
    await seed(alice.userId, [
      { text: 'secret plan xylophone' },
      {
        text: JSON.stringify({
          query: 'xylophone makers',
          introduction: 'Secret workshops.',
          report: 'x',
          sources: [],
        }),
        author: 'assistant',
        type: 'research_report',
      },
    ]);
    const [bobs] = await seed(bob.userId, [{ text: 'my xylophone lesson' }]);
    expect((await search(bob.browser, { q: 'xylophone' })).results.map((r) => r.message_id)).toEqual([bobs]);
    expect((await search(bob.browser, { q: 'secret plan' })).results).toEqual([]);
    expect((await search(bob.browser, { q: 'secret workshops' })).results).toEqual([]);
    expect((await search(alice.browser, { q: 'secret workshops' })).results).toHaveLength(1);
  });

  it('answers 400 in the API error shape for a missing, blank or too long text and a bad limit or cursor', async () => {
    const { browser } = await signedInUser(t);
    const cases: Array<[string, string, string?]> = [
      ['', 'q', CHAT_SEARCH_TEXT_REQUIRED],
      ['q=', 'q', CHAT_SEARCH_TEXT_REQUIRED],
      ['q=%20%20%20', 'q', CHAT_SEARCH_TEXT_REQUIRED],
      [`q=${'a'.repeat(201)}`, 'q', CHAT_SEARCH_TEXT_TOO_LONG],
      ['q=a&q=b', 'q'],
      ['q=a&limit=0', 'limit'],
      ['q=a&limit=51', 'limit'],
      ['q=a&limit=ten', 'limit'],
      ['q=a&before=0', 'before'],
      ['q=a&before=x', 'before'],
    ];
    for (const [qs, field, message] of cases) {
      const res = await browser.get(`${S}?${qs}`);
      expect(res.statusCode, qs).toBe(400);
      const body = ZApiError.parse(res.json());
      expect(body.code).toBe('validation_error');
      expect(Object.keys(body.field_errors ?? {}), qs).toEqual([field]);
      if (message) expect(body.field_errors?.[field]).toEqual([message]);
    }
    // 200 characters is allowed (after trimming).
    expect((await browser.get(`${S}?q=${encodeURIComponent(` ${'a'.repeat(200)} `)}`)).statusCode).toBe(200);
  });

  it('answers 401 when signed out', async () => {
    const res = await new Browser(t.app).get(`${S}?q=anything`);
    expect(res.statusCode).toBe(401);
    expect(ZApiError.parse(res.json()).code).toBe('unauthorized');
  });
});
