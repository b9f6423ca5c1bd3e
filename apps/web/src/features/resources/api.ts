// The resource history: GET /api/resources/?limit=30 with `before` or `after` a sort_date.
import { RESOURCES_FETCH, ZResourceList } from '@daybook/contracts';
import { apiRequest } from '../../lib/api.ts';

export const RESOURCES_PATH = '/api/resources/';

export interface ResourcesCursor {
  /** Items older than this sort_date, newest first. */
  before?: string;
  /** Items newer than this sort_date, oldest first. */
  after?: string;
}

export function listResources({ before, after }: ResourcesCursor = {}, signal?: AbortSignal) {
  const params = new URLSearchParams({ limit: String(RESOURCES_FETCH) });
  if (before) params.set('before', before);
  if (after) params.set('after', after);
  return apiRequest(`${RESOURCES_PATH}?${params}`, ZResourceList, { signal });
}
