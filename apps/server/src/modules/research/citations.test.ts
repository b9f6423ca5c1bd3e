import { describe, expect, it } from 'vitest';
import { chunkText, selectChunks } from './chunks.ts';
import { checkCitations, normalizeUrl } from './citations.ts';
import { withoutLinks } from './research.service.ts';

const pages = [
  { url: 'https://bikes.example/commute', title: 'Commuting by e-bike' },
  { url: 'https://cycling.example/batteries/', title: 'Batteries' },
];

describe('checkCitations', () => {
  it('keeps citations of pages that were read and renumbers them in the order they are cited', () => {
    const result = checkCitations(
      ['Batteries last [2].', 'Commuters save time [1][2] and money [1, 2].', 'In short [2-1].'],
      [
        { url: 'https://www.bikes.example/commute?utm_source=x#top', title: 'model title' },
        { url: 'https://cycling.example/batteries', title: '' },
      ],
      pages,
    );
    expect(result.texts).toEqual([
      'Batteries last [1].',
      'Commuters save time [2][1] and money [2][1].',
      // A backwards range names nothing.
      'In short.',
    ]);
    expect(result.sources).toEqual([
      { url: 'https://cycling.example/batteries/', title: 'Batteries' },
      { url: 'https://bikes.example/commute', title: 'Commuting by e-bike' },
    ]);
  });

  it('drops citations of pages that were not read, and numbers past the list', () => {
    const result = checkCitations(
      ['Fact [1]. Invented [2]. Nowhere [7].'],
      [pages[0] as { url: string; title: string }, { url: 'https://not-read.example/', title: 'Made up' }],
      pages,
    );
    expect(result.texts).toEqual(['Fact [1]. Invented. Nowhere.']);
    expect(result.sources.map((s) => s.url)).toEqual(['https://bikes.example/commute']);
    expect(result.dropped).toBe(2);
  });

  it('leaves text without citations alone', () => {
    expect(checkCitations(['A list: [link](https://x.example) and [note].'], [], pages).texts).toEqual([
      'A list: [link](https://x.example) and [note].',
    ]);
  });
});

describe('normalizeUrl', () => {
  it('treats tracking parameters, fragments, www. and a trailing slash as the same page', () => {
    expect(normalizeUrl('https://WWW.Example.com/a/?utm_medium=x&b=2&a=1#frag')).toBe('example.com/a?a=1&b=2');
    expect(normalizeUrl('ftp://example.com/')).toBeNull();
    expect(normalizeUrl('not a url')).toBeNull();
  });
});

describe('chunks', () => {
  it('cuts text into chunks of about 1,000 characters at paragraph and sentence boundaries', () => {
    const long = 'Electric bikes make commuting easier. '.repeat(60);
    const chunks = chunkText(`# Title\n\nFirst paragraph.\n\n${long}\n\nLast words.`);
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(1000);
    expect(chunks.join(' ').replace(/\s+/g, ' ')).toContain('Last words.');
    expect(chunks[0]?.startsWith('# Title\n\nFirst paragraph.')).toBe(true);
  });

  it('keeps the best chunk of every page, then the best of the rest, under the budget', () => {
    const chunks = [0, 0, 0, 1, 1].map((page, index) => ({ page, index, text: 'x'.repeat(400) }));
    // Ranked: page 0's chunks first, page 1's last.
    const chosen = selectChunks(chunks, [0, 1, 2, 3, 4], 1200);
    expect(chosen.map((c) => `${c.page}`)).toEqual(['0', '0', '1']);
  });
});

describe('withoutLinks', () => {
  it('keeps the words of links a page slipped into a report, and drops bare addresses', () => {
    expect(
      withoutLinks('Claim your [free prize](https://phish.example/x "t") now ![img](https://x.example/a.png) [2].'),
    ).toBe('Claim your free prize now img [2].');
    expect(withoutLinks('Visit https://phish.example/login or <https://x.example>.')).toBe('Visit  or .');
  });
});
