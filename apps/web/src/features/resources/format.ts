// How resource items read in the list: titles, previews, dates, status.
import { RESOURCES_PREVIEW_MAX, type TResourceItem } from '@daybook/contracts';
import { capitalize } from '../research/title.ts';

export const TYPE_LABELS = { daily_message: 'Daily Message', research: 'Web Research' } as const;

/** `text` cut to `max` characters (not UTF-16 halves) with an ellipsis when longer. */
export function cut(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length > max ? `${chars.slice(0, max).join('').trimEnd()}…` : text;
}

/**
 * A preview as plain text: markdown's markers would show as symbols in one short line. The server
 * sends the text's first RESOURCES_PREVIEW_MAX characters, so a preview that long was cut there: it
 * ends with an ellipsis, and a link, emphasis or emoji the cut left open loses its broken end.
 */
export function previewText(markdown: string): string {
  // UTF-16 units: at least as many as characters, so a cut counted either way is seen.
  const cutByServer = markdown.length >= RESOURCES_PREVIEW_MAX;
  let plain = (cutByServer ? markdown.replace(/[\uD800-\uDBFF]$/, '') : markdown)
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/^\s{0,3}(#{1,6}\s+|>\s?|[-*+]\s+|\d+[.)]\s+)/gm, '')
    .replace(/(\*\*|__|\*|_|~~|`)(?=\S)([\s\S]*?\S)\1/g, '$2');
  if (cutByServer) {
    plain = plain
      .replace(/\[([^\]]*)\]\([^)]*$/, '$1')
      .replace(/\[([^\]]*)$/, '$1')
      .replace(/\*\*|__|~~|`/g, '');
  }
  plain = plain.replace(/\s+/g, ' ').trim();
  const shown = cut(plain, RESOURCES_PREVIEW_MAX);
  return cutByServer && !shown.endsWith('…') ? `${shown.replace(/[\s.,;:!?-]+$/, '')}…` : shown;
}

const longDate = new Intl.DateTimeFormat(undefined, {
  weekday: 'long',
  year: 'numeric',
  month: 'long',
  day: 'numeric',
});
const shortDateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** A delivery date (YYYY-MM-DD) read as that calendar day wherever the reader is. */
export function formatDeliveryDate(day: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day.trim());
  if (!m) return day;
  const date = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return Number.isNaN(date.getTime()) ? day : longDate.format(date);
}

export function formatDateTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : shortDateTime.format(date);
}

export function itemTitle(item: TResourceItem): string {
  if (item.resource_type === 'daily_message') return formatDeliveryDate(item.title);
  return capitalize(item.title.trim()) || 'Web research';
}

/** Research that is not done says where it is. */
export function statusLabel(item: TResourceItem): { text: string; tone: 'progress' | 'failed' | 'cancelled' } | null {
  if (item.resource_type !== 'research') return null;
  if (item.status === 'queued' || item.status === 'running') return { text: 'In progress', tone: 'progress' };
  if (item.status === 'failed') return { text: 'Failed', tone: 'failed' };
  if (item.status === 'cancelled') return { text: 'Cancelled', tone: 'cancelled' };
  return null;
}

export const itemPath = (item: TResourceItem) =>
  item.resource_type === 'daily_message' ? `/resources/daily-message/${item.id}` : `/resources/research/${item.id}`;
