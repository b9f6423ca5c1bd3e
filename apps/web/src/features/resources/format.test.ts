import { RESOURCES_PREVIEW_MAX } from '@daybook/contracts';
import { describe, expect, it } from 'vitest';
import { formatDeliveryDate, itemPath, itemTitle, previewText } from './format.ts';

/** The server's preview: the text's first RESOURCES_PREVIEW_MAX characters. */
const serverPreview = (text: string) => Array.from(text).slice(0, RESOURCES_PREVIEW_MAX).join('');

describe('daily message previews', () => {
  it('shows a short message whole, as plain text, without an ellipsis', () => {
    expect(previewText('# Good morning\n\nIt is **sunny** in [Lisbon](https://x.example).')).toBe(
      'Good morning It is sunny in Lisbon.',
    );
  });

  it('ends a preview the server cut with an ellipsis', () => {
    const text = `Good morning, Sam. ${'The sun is out over the river and the trams are running. '.repeat(5)}`;
    const shown = previewText(serverPreview(text));
    expect(shown.endsWith('…')).toBe(true);
    expect(shown.startsWith('Good morning, Sam. The sun is out')).toBe(true);
    expect(Array.from(shown).length).toBeLessThanOrEqual(RESOURCES_PREVIEW_MAX + 1);
  });

  it('drops the markers of a link or emphasis the cut left open', () => {
    const link = serverPreview(`${'a'.repeat(130)} see [the forecast](https://weather.example/lisbon/today)`);
    expect(previewText(link)).toBe(`${'a'.repeat(130)} see the forecast…`);
    const bold = serverPreview(`${'b'.repeat(140)} **very hot today**`);
    expect(previewText(bold)).toBe(`${'b'.repeat(140)} very ho…`);
  });

  it('a cut through an emoji (a UTF-16 slice) drops its broken half', () => {
    const text = `${'a'.repeat(RESOURCES_PREVIEW_MAX - 1)}🌧️ and more`;
    const sliced = text.slice(0, RESOURCES_PREVIEW_MAX);
    expect(sliced.endsWith('\uD83C')).toBe(true);
    expect(previewText(sliced)).toBe(`${'a'.repeat(RESOURCES_PREVIEW_MAX - 1)}…`);
  });

  it('a longer preview is cut to RESOURCES_PREVIEW_MAX characters here too', () => {
    const shown = previewText('x'.repeat(400));
    expect(shown).toBe(`${'x'.repeat(RESOURCES_PREVIEW_MAX)}…`);
  });
});

describe('daily message items', () => {
  const item = {
    resource_type: 'daily_message' as const,
    id: 9,
    sort_date: '2026-11-24T07:00:00.000Z',
    created: '2026-11-24T06:55:00.000Z',
    title: '2026-11-24',
    preview: 'Good morning',
    status: null,
  };

  it('are titled by their delivery date as that calendar day, and link to their page', () => {
    expect(itemTitle(item)).toBe(formatDeliveryDate('2026-11-24'));
    expect(formatDeliveryDate('2026-11-24')).toBe(
      new Intl.DateTimeFormat(undefined, { weekday: 'long', year: 'numeric', month: 'long', day: 'numeric' }).format(
        new Date(2026, 10, 24),
      ),
    );
    expect(itemPath(item)).toBe('/resources/daily-message/9');
  });

  it('a title that is not a date shows as it is', () => {
    expect(formatDeliveryDate('someday')).toBe('someday');
  });
});
