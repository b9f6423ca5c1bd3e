import {
  RESOURCES_PREVIEW_MAX,
  type TResourceItem,
  type TResourceList,
  type TResourcesQuery,
} from '@daybook/contracts';
import type { ResourceRow, ResourcesRepo } from './resources.repo.ts';

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
  // By characters, not UTF-16 units: an emoji is never cut in half.
  return Array.from(words).slice(0, RESOURCES_PREVIEW_MAX).join('');
}

export function presentResource(row: ResourceRow): TResourceItem {
  return {
    resource_type: row.resourceType,
    id: row.id,
    sort_date: row.sortDate.toISOString(),
    created: row.createdAt.toISOString(),
    title: row.title,
    preview: row.preview === null ? null : previewOf(row.preview),
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
