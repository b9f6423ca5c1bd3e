// A research's title, kept apart from the report's markdown so the history list loads without it.

export const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** The query as a title: trimmed, first letter capitalised. */
export const reportTitle = (query: string | undefined, fallback = 'Research report') =>
  query?.trim() ? capitalize(query.trim()) : fallback;
