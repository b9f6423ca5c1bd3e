// The Memories page: pages and searches, answered from what was kept while the user's memories
// have not changed.
import { LRUCache } from 'lru-cache';
import type { MemoriesRepo } from './memories.repo.ts';

/**
 * What the Memories page was answered with, kept per process and valid while the user's memory
 * version is the same (memory_counts.version, grown by triggers in the same transaction as any
 * change, from any process): the text of recent pages, and the matching ids of recent searches
 * (so the next page of a search reads 30 rows by id instead of searching again). A kept answer is
 * used only after reading the version, so it is never stale.
 */
export function createListCaches({ pageBytes = 8 * 1024 * 1024, searchIds = 200_000 } = {}) {
  return {
    // A minute at most: a database restored from a backup winds the version sequence back.
    pages: new LRUCache<string, { version: string; results: string; count: number }>({
      maxSize: pageBytes,
      sizeCalculation: (page, key) => page.results.length + key.length + 64,
      ttl: 60_000,
    }),
    searches: new LRUCache<string, { version: string; ids: number[] }>({
      maxSize: searchIds,
      // A ~200-character key weighs about as much as 50 ids: searches that match nothing must not pile up.
      sizeCalculation: (search, key) => search.ids.length + Math.ceil(key.length / 4) + 1,
      ttl: 60_000,
    }),
  };
}

export function createMemoriesList({ repo }: { repo: MemoriesRepo }) {
  const { pages, searches } = createListCaches();
  return {
    /**
     * A page of the user's memories: `results` is the JSON array of TMemory objects as text, as
     * PostgreSQL wrote it (see MemoriesRepo.list). A search's matching ids are kept (see createSearchCache), so
     * the next page, the same search again or a refresh reads 30 rows by id instead of searching;
     * only a real search takes its turn through `searchTurn`.
     */
    async list(
      userId: number,
      options: { deleted: boolean; search?: string; limit: number; offset: number },
      searchTurn: <T>(work: () => Promise<T>) => Promise<T> = (work) => work(),
    ) {
      const { search, deleted, limit, offset } = options;
      const view = `${userId}\u0000${deleted ? 'd' : 'a'}`;
      const pageKey = `${view}\u0000${limit}\u0000${offset}\u0000${search ?? ''}`;
      const keptPage = pages.get(pageKey);
      if (keptPage && (await repo.version(userId)) === keptPage.version) return keptPage;
      let page: { version: string; results: string; count: number };
      if (!search) {
        page = await repo.list(userId, options);
      } else {
        const searchKey = `${view}\u0000${search}`;
        const kept = searches.get(searchKey);
        const byIds = kept && (await repo.pageByIds(userId, kept.ids.slice(offset, offset + limit), deleted));
        // Read in the same snapshot as the version: unchanged, so the kept ids are still the answer.
        if (kept && byIds && byIds.version === kept.version) {
          page = { ...byIds, count: kept.ids.length };
        } else {
          const found = await searchTurn(() => repo.search(userId, { deleted, search, limit, offset }));
          searches.set(searchKey, { version: found.version, ids: found.ids });
          // A search's page is kept from its second time on: a stream of different searches (someone
          // typing) would otherwise fill the pages with text read once, and the process's heap with
          // it (the chat's p99 in the benchmark grew by half after such a flood).
          return found;
        }
      }
      pages.set(pageKey, { version: page.version, results: page.results, count: page.count });
      return page;
    },
  };
}
