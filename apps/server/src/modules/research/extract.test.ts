import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTICLES, BOILERPLATE, type FakeSite, startFakeSite } from '../../../../../tests/helpers/fake-site.ts';
import { renderBigArticle } from '../../../../../tests/helpers/fake-site-pages.ts';
import { createExtractor, ExtractError, type Extractor, extractTimings } from './extract.ts';

let site: FakeSite;
let extractor: Extractor;

beforeAll(async () => {
  site = await startFakeSite();
  // The deadline (5 s in production) has its own test below, on a page that never finishes; these tests
  // check what is read from pages that do, which a busy machine must not turn into a timeout.
  extractor = createExtractor({ timeoutMs: 120_000 });
});
afterAll(async () => {
  await extractor?.close();
  await site?.close();
});

async function page(path: string) {
  const url = site.url(path);
  const res = await fetch(url);
  return { body: await res.text(), contentType: 'text/html', url };
}

/** A page that keeps defuddle and Readability over linkedom busy for seconds: deep, repeated nesting. */
const STUCK = `<html><body>${`${'<div>'.repeat(95)}deep${'</div>'.repeat(95)}`.repeat(40)}</body></html>`;

describe('extract', () => {
  it.each(ARTICLES.map((a) => [a.slug, a] as const))(
    'reads the article %s as markdown, without the site around it',
    async (slug, article) => {
      const { title, markdown } = await extractor.extract(await page(`/articles/${slug}`));
      expect(title).toContain(article.title);
      for (const section of article.sections) {
        expect(markdown).toContain(`## ${section.heading}`);
        for (const paragraph of section.paragraphs) expect(markdown).toContain(paragraph);
        for (const item of section.list ?? [])
          expect(markdown).toMatch(new RegExp(`^[-*] +${item.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
      }
      expect(markdown.toLowerCase()).toContain(article.topic.toLowerCase());
      expect(markdown).not.toContain('Field Notes is an independent magazine');
      expect(markdown).not.toContain('Home and garden');
      expect(markdown).not.toContain('dataLayer');
      expect(markdown).not.toContain('font-family');
    },
  );

  it('drops the cookie banner, menus, sidebar, ads and footer of a boilerplate-heavy page', async () => {
    const { title, markdown } = await extractor.extract(await page('/news/dark-sky-photography'));
    expect(title).toContain('Dark-sky photography for beginners');
    expect(markdown).toContain('Dark-sky photography starts with geography rather than gear.');
    expect(markdown).toContain('## Camera settings that work');
    for (const phrase of Object.values(BOILERPLATE)) expect(markdown).not.toContain(phrase);
    for (const phrase of [
      'Accept all',
      'Share on Facebook',
      'Markets slide',
      'Advertisement',
      'loadAds',
      'Subscribe',
    ]) {
      expect(markdown).not.toContain(phrase);
    }
  });

  it('passes plain text through, titled by its first line', async () => {
    const body = '\r\nHeat pumps in winter\r\n\r\nAn air-source heat pump moves heat from the outdoor air.\r\n';
    const result = await extractor.extract({ body, contentType: 'text/plain', url: site.url('/plain.txt') });
    expect(result).toEqual({
      title: 'Heat pumps in winter',
      markdown: 'Heat pumps in winter\n\nAn air-source heat pump moves heat from the outdoor air.',
    });
  });

  it('falls back to the text of the page when no extractor finds an article', async () => {
    const body =
      '<html><head><title>Opening hours</title><script>track()</script></head><body><nav><a href="/">Menu</a></nav><div>Open Monday to Friday, nine to five.</div><footer>Imprint</footer></body></html>';
    const result = await extractor.extract({ body, contentType: 'text/html', url: site.url('/hours') });
    expect(result).toEqual({ title: 'Opening hours', markdown: 'Open Monday to Friday, nine to five.' });

    // Nesting this deep would keep the extractors busy for minutes; its text is read instead.
    const deep = `<html><body>${'<div>'.repeat(3000)}Deeply nested words.${'</div>'.repeat(3000)}</body></html>`;
    expect((await extractor.extract({ body: deep, contentType: 'text/html', url: site.url('/deep') })).markdown).toBe(
      'Deeply nested words.',
    );
  });

  it('caps the markdown of a very long page', async () => {
    const { markdown } = await extractor.extract({
      body: renderBigArticle(0, 1_000_000),
      contentType: 'text/html',
      url: site.url('/big/0'),
    });
    expect(markdown.length).toBeLessThanOrEqual(200_000);
    expect(markdown.length).toBeGreaterThan(150_000);
  });

  it('works off the event loop: timers keep firing while big pages are extracted', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    try {
      const pages = [1, 2, 3, 4].map((i) => renderBigArticle(i, 300_000));
      pages.push(renderBigArticle(5, 5_000_000));
      const results = await Promise.all(
        pages.map((body, i) => extractor.extract({ body, contentType: 'text/html', url: site.url(`/big/${i}`) })),
      );
      expect(results.map((r) => r.title)).toEqual([
        'Field notes 2: a long read on e-bike battery care',
        'Field notes 3: a long read on protected bike lanes',
        'Field notes 4: a long read on sourdough starter',
        'Field notes 5: a long read on air-source heat pump',
        'Field notes 6: a long read on balcony container garden',
      ]);
    } finally {
      clearInterval(timer);
    }
    // Parsing on this thread would block between ticks for whole pages, leaving a handful at most.
    expect(ticks).toBeGreaterThanOrEqual(20);
  });
});

describe('the worker pool', () => {
  it('tells subscribers how long each page took in its worker', async () => {
    const seen: Array<{ url: string; ms: number; cpuMs: number }> = [];
    const listen = (message: unknown) => seen.push(message as (typeof seen)[number]);
    subscribe(extractTimings.name, listen);
    try {
      const article = await page('/articles/sourdough-starter');
      await extractor.extract(article);
      expect(seen).toEqual([{ url: article.url, ms: expect.any(Number), cpuMs: expect.any(Number) }]);
      expect(seen[0]?.ms).toBeGreaterThan(0);
      // The kernel updates a thread's CPU time when it is scheduled: a short extraction on a busy machine may read 0.
      if (process.platform === 'linux') expect(seen[0]?.cpuMs).toBeGreaterThanOrEqual(0);
    } finally {
      unsubscribe(extractTimings.name, listen);
    }
  });

  it('gives up on a stuck page, replaces its worker and goes on with the queue', async () => {
    const pool = createExtractor({ workers: 1, timeoutMs: 1000 });
    try {
      const article = await page('/articles/heat-pumps');
      const [stuck, next] = await Promise.allSettled([
        pool.extract({ body: STUCK, contentType: 'text/html', url: site.url('/stuck') }),
        pool.extract(article),
      ]);
      expect(stuck.status === 'rejected' && stuck.reason).toBeInstanceOf(ExtractError);
      expect(stuck.status === 'rejected' && (stuck.reason as ExtractError).code).toBe('timeout');
      expect(next.status === 'fulfilled' && next.value.markdown).toContain('An air-source heat pump moves heat');
    } finally {
      await pool.close();
    }
  });

  it('keeps a bounded queue, and fails what is left when closed', async () => {
    const pool = createExtractor({ workers: 1, maxQueue: 2 });
    const article = await page('/articles/bike-lanes');
    const first = pool.extract(article);
    const second = pool.extract(article);
    await expect(pool.extract(article)).rejects.toMatchObject({ code: 'busy' });
    expect((await first).title).toContain('protected bike lanes');
    await second;

    const pending = expect(pool.extract(article)).rejects.toMatchObject({ code: 'closed' });
    await pool.close();
    await pending;
    await expect(pool.extract(article)).rejects.toMatchObject({ code: 'closed' });
  });
});
