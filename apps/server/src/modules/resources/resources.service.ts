import type { TResourceItem, TResourceList, TResourcesQuery } from '@daybook/contracts';
import type { ResourceRow, ResourcesRepo } from './resources.repo.ts';

export function presentResource(row: ResourceRow): TResourceItem {
  return {
    resource_type: row.resourceType,
    id: row.id,
    sort_date: row.sortDate.toISOString(),
    created: row.createdAt.toISOString(),
    title: row.title,
    preview: row.preview,
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
