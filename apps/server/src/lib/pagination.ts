// The limit/offset lists' links (`{ results, count, next, previous }`), one way for every list.

/**
 * A page's `next` and `previous` URLs (null past either end). `filters` are the list's other query
 * parameters, kept in the links in their order; an empty or false one is left out.
 */
export function pageLinks(
  listUrl: string,
  page: { limit: number; offset: number },
  count: number,
  filters: Record<string, string | boolean | undefined> = {},
): { next: string | null; previous: string | null } {
  const at = (offset: number) => {
    const params = new URLSearchParams({ limit: String(page.limit), offset: String(offset) });
    for (const [name, value] of Object.entries(filters)) if (value) params.set(name, String(value));
    return `${listUrl}?${params}`;
  };
  return {
    next: page.offset + page.limit < count ? at(page.offset + page.limit) : null,
    previous: page.offset > 0 ? at(Math.max(0, page.offset - page.limit)) : null,
  };
}
