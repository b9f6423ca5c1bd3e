// The memories calls under /api/memories/ (error shape: { error, code, field_errors? }).
import {
  MEMORY_PAGE_SIZE,
  type TMemoryInput,
  type TMemoryPage,
  ZApiError,
  ZMemory,
  ZMemoryCategories,
  ZMemoryImportResult,
  ZMemoryPage,
} from '@daybook/contracts';
import { z } from 'zod';
import { ApiError, apiRequest, GENERIC_ERROR, statusText } from '../../lib/api.ts';
import { filenameFrom } from '../account-data/api.ts';

export const MEMORIES_PATH = '/api/memories/';
/** Answered as a file download (Content-Disposition: attachment). */
export const MEMORIES_EXPORT_PATH = `${MEMORIES_PATH}export/`;

/**
 * Fetches the export file (fetched rather than linked, so a refusal such as the hourly limit's 429
 * can be shown on the page). Throws ApiError on a refusal or a broken download.
 */
export async function fetchMemoriesExport(signal?: AbortSignal): Promise<{ blob: Blob; filename: string }> {
  try {
    const response = await fetch(MEMORIES_EXPORT_PATH, {
      headers: { Accept: 'application/json' },
      credentials: 'same-origin',
      signal,
    });
    if (!response.ok) {
      const parsed = ZApiError.safeParse(await response.json().catch(() => undefined));
      if (parsed.success) throw new ApiError(parsed.data.error, response.status, parsed.data.code);
      throw new ApiError(statusText(response.status), response.status);
    }
    return {
      blob: new Blob([await response.arrayBuffer()], { type: 'application/json' }),
      filename: filenameFrom(response.headers.get('content-disposition')),
    };
  } catch (err) {
    if (err instanceof ApiError || (err as Error).name === 'AbortError') throw err;
    // The server ends the response early when it fails half-way: no half file.
    throw new ApiError(GENERIC_ERROR, 0, 'network_error');
  }
}

/** The spec allows a bare array for the list; it is wrapped into the page shape. */
const ZMemoryList = z.union([
  ZMemoryPage,
  z
    .array(ZMemory)
    .transform((results): TMemoryPage => ({ results, count: results.length, next: null, previous: null })),
]);

const ZNoContent = z.unknown();

export interface MemoryListQuery {
  /** 0-based offset of the first memory. */
  offset: number;
  showDeleted: boolean;
  search: string;
}

export function listMemories({ offset, showDeleted, search }: MemoryListQuery, signal?: AbortSignal) {
  const params = new URLSearchParams({ limit: String(MEMORY_PAGE_SIZE), offset: String(offset) });
  if (showDeleted) params.set('show_deleted', 'true');
  const text = search.trim();
  if (text) params.set('search', text);
  return apiRequest(`${MEMORIES_PATH}?${params}`, ZMemoryList, { signal });
}

export const listMemoryCategories = (signal?: AbortSignal) =>
  apiRequest(`${MEMORIES_PATH}categories/`, ZMemoryCategories, { signal });

export const createMemory = (body: TMemoryInput) => apiRequest(MEMORIES_PATH, ZMemory, { method: 'POST', body });

/** Full update; `restore_deleted: true` brings a deleted memory back (409 without it). */
export const updateMemory = (id: number, body: TMemoryInput) =>
  apiRequest(`${MEMORIES_PATH}${id}/`, ZMemory, { method: 'PUT', body });

/** Soft delete: the memory moves to the deleted view. */
export const deleteMemory = (id: number) => apiRequest(`${MEMORIES_PATH}${id}/`, ZNoContent, { method: 'DELETE' });

/** `file` is a parsed export file (or `{ memories: [...] }`). */
export const importMemories = (file: unknown) =>
  apiRequest(`${MEMORIES_PATH}import/`, ZMemoryImportResult, { method: 'POST', body: file });
