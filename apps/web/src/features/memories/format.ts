// How memories read in the list: cut texts, dates, counts, safe links.

/** The spec's cuts: data at 100 characters, URLs at 30. */
export const DATA_CUT = 100;
export const URL_CUT = 30;

/** `text` cut to `max` characters (not UTF-16 halves) with an ellipsis when longer. */
export function cut(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length > max ? `${chars.slice(0, max).join('')}…` : text;
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

const formatWith = (format: Intl.DateTimeFormat) => (iso: string) => {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : format.format(date);
};

export const formatDateTime = formatWith(dateTime);
export const formatDate = formatWith(dateOnly);

export const countLabel = (count: number, deleted: boolean) =>
  `${count.toLocaleString()} ${deleted ? 'deleted ' : ''}${count === 1 ? 'memory' : 'memories'}`;

/** Only web addresses become links: a stored `javascript:` URL must never be clickable. */
export const isWebUrl = (url: string) => /^https?:\/\//i.test(url);
