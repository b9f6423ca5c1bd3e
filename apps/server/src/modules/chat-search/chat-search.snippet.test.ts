import { describe, expect, it } from 'vitest';
import { fold, foldSearch, markdownToPlain, SNIPPET_LENGTH, snippetFor } from './chat-search.snippet.ts';

const marked = ({ snippet, highlights }: ReturnType<typeof snippetFor>) =>
  highlights.map((h) => snippet.slice(h.start, h.end));

describe('snippetFor', () => {
  it('marks every match in a short message, case- and accent-insensitively', () => {
    const s = snippetFor('Le Café de Flore, then another cafe.', 'message', 'CAFÉ');
    expect(s.snippet).toBe('Le Café de Flore, then another cafe.');
    expect(marked(s)).toEqual(['Café', 'cafe']);
  });

  it('cuts a long message around the first match, between words, with ellipses', () => {
    const words = Array.from({ length: 80 }, (_, i) => `word${i}`);
    words[40] = 'NEEDLE';
    const s = snippetFor(words.join(' '), 'message', 'needle');
    expect(s.snippet.startsWith('…word')).toBe(true);
    expect(s.snippet.endsWith('…')).toBe(true);
    expect(s.snippet.length).toBeLessThanOrEqual(SNIPPET_LENGTH + 2);
    expect(marked(s)).toEqual(['NEEDLE']);
  });

  it('shows markdown as plain text and finds matches across its marks', () => {
    const s = snippetFor(
      '## Plan\n\n- **Buy** the [tickets](https://example.org/x) for *Lisbon*',
      'markdown',
      'buy the tickets',
    );
    expect(s.snippet).toBe('Plan Buy the tickets for Lisbon');
    expect(marked(s)).toEqual(['Buy the tickets']);
  });

  it('finds a match that only the markdown source holds (a link address)', () => {
    const s = snippetFor('See [the docs](https://example.org/guide).', 'markdown', 'example.org');
    expect(marked(s)).toEqual(['example.org']);
  });

  it('takes wildcards literally and keeps offsets right after characters outside the BMP', () => {
    const s = snippetFor('🎉 50% off_today 50% again', 'message', '50%');
    expect(marked(s)).toEqual(['50%', '50%']);
    expect(snippetFor('snake_case', 'message', '_c').highlights).toHaveLength(1);
  });

  it("shows a research report's matching part as plain text, its escapes decoded, never its JSON", () => {
    const raw = JSON.stringify({
      id: 3,
      query: 'ferries',
      introduction: 'Ferries from *Cais do Sodré*\nrun often; C:\\temp \u0007 "quoted".',
      report: 'Times on [the operator](https://ttsl.example/horarios).',
      sources: [{ url: 'https://a.example', title: 'Timetable' }],
    });
    const intro = snippetFor(raw, 'research_report', 'cais do sodre');
    expect(intro.snippet).toBe('Ferries from Cais do Sodré run often; C:\\temp "quoted".');
    expect(marked(intro)).toEqual(['Cais do Sodré']);
    expect(marked(snippetFor(raw, 'research_report', 'c:\\temp'))).toEqual(['C:\\temp']);
    // Only the markdown source holds a link's address; the body is then shown as written.
    expect(snippetFor(raw, 'research_report', 'ttsl').snippet).toBe(
      'Times on [the operator](https://ttsl.example/horarios).',
    );
    expect(snippetFor(raw, 'research_report', 'timetable').snippet).toBe('Timetable');
    expect(snippetFor(raw, 'research_report', 'zzz')).toEqual({
      snippet: 'ferries Ferries from Cais do Sodré run often; C:\\temp "quoted". Times on the operator. Timetable',
      highlights: [],
    });
    expect(snippetFor('{"introduction": "cut sh', 'research_report', 'cut')).toEqual({ snippet: '', highlights: [] });
  });

  it('falls back to the start of the message when the match cannot be placed', () => {
    expect(snippetFor('Hello there', 'message', 'zzz')).toEqual({ snippet: 'Hello there', highlights: [] });
  });
});

describe('folding', () => {
  it('keeps one code unit per code unit and strips decomposed accents from the search', () => {
    const text = 'ÉCOLE Straße İstanbul Ǆ';
    expect(fold(text)).toHaveLength(text.length);
    expect(fold('ÉCOLE')).toBe('ecole');
    expect(foldSearch('cafe\u0301  au   lait')).toBe('cafe au lait');
  });

  it('strips emphasis without eating underscores inside words', () => {
    expect(markdownToPlain('a *b* __c__ snake_case `code`')).toBe('a b c snake_case code');
  });
});
