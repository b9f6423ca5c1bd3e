import {
  RESOURCES_PREVIEW_MAX,
  type TResourceItem,
  type TResourceList,
  type TResourcesQuery,
} from '@daybook/contracts';
import type { ResourceRow, ResourcesRepo } from './resources.repo.ts';

/** The first `max` characters (code points, not UTF-16 units: an emoji is never cut in half). */
function firstChars(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = 0;
  for (let n = 0; n < max && end < text.length; n++) {
    const high = text.charCodeAt(end);
    const low = text.charCodeAt(end + 1);
    end += high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff ? 2 : 1;
  }
  return text.slice(0, end);
}

/** The start of a markdown text as words: no markup, no link targets, at most RESOURCES_PREVIEW_MAX characters. */
export function previewOf(markdown: string): string {
  const words = markdown
    // A heading runs into its section as "Weather in Lisbon: Light rain…", not "Lisbon Light rain".
    .replace(/^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/gm, (_m, h: string) => (/[.:!?]$/.test(h) ? h : `${h}:`))
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[#*_`>|~]+/g, '')
    .replace(/\\(.)/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
  return firstChars(words, RESOURCES_PREVIEW_MAX);
}

// Previews by their text: a message's text does not change, and the markup's regular expressions
// cost far more per item than the lookup (a page holds up to 30 daily messages).
const PREVIEWS_MAX = 1000;
const previews = new Map<string, string>();
function cachedPreview(markdown: string): string {
  let preview = previews.get(markdown);
  if (preview === undefined) {
    if (previews.size >= PREVIEWS_MAX) previews.clear();
    preview = previewOf(markdown);
    previews.set(markdown, preview);
  }
  return preview;
}

export function presentResource(row: ResourceRow): TResourceItem {
  return {
    resource_type: row.resourceType,
    id: row.id,
    sort_date: row.sortDate,
    created: row.createdAt,
    title: row.title,
    preview: row.preview === null ? null : cachedPreview(row.preview),
    status: row.resourceType === 'research' ? (row.status as TResourceItem['status']) : null,
  };
}

export function createResourcesService({ repo }: { repo: ResourcesRepo }) {
  return {
    async list(userId: number, query: TResourcesQuery): Promise<TResourceList> {
      return (await repo.list(userId, query)).map(presentResource);
    },
  };
}

export type ResourcesService = ReturnType<typeof createResourcesService>;
