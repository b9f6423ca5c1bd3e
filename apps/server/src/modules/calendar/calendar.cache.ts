// A short-lived cache of what calendars answered: callers asking at once share one load, failures are
// kept briefly too (a calendar that fails is not fetched again on every read), and the whole cache is
// bounded by weight (events, characters), not only by entries, so no user can fill the memory.
import type { SourceEvent } from './calendar.types.ts';

export interface CacheOptions<T> {
  ttlMs: number;
  /** How long a failure is kept (default a minute, at most ttlMs). */
  failureTtlMs?: number;
  /** The most weight held; the oldest entries go first. */
  maxWeight: number;
  weigh(value: T): number;
  now(): number;
}

export interface Cache<T> {
  get(key: string, load: () => Promise<T>): Promise<T>;
  /** Forgets every key that starts with `prefix`. */
  dropPrefix(prefix: string): void;
}

interface Entry<T> {
  /** When the entry stops serving. */
  until: number;
  value: Promise<T>;
  weight: number;
}

export function createCache<T>(options: CacheOptions<T>): Cache<T> {
  const { ttlMs, maxWeight, now } = options;
  const failureTtlMs = Math.min(options.failureTtlMs ?? 60_000, ttlMs);
  const entries = new Map<string, Entry<T>>();
  let total = 0;

  const remove = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    total -= entry.weight;
    entries.delete(key);
  };

  const trim = () => {
    for (const key of entries.keys()) {
      if (total <= maxWeight) break;
      remove(key);
    }
  };

  return {
    get(key, load) {
      const hit = entries.get(key);
      if (hit && now() < hit.until) return hit.value;
      remove(key);
      if (ttlMs <= 0) return load();
      const value = load();
      const entry: Entry<T> = { until: now() + ttlMs, value, weight: 0 };
      entries.set(key, entry);
      value.then(
        (result) => {
          if (entries.get(key) !== entry) return;
          entry.weight = Math.max(1, options.weigh(result));
          total += entry.weight;
          trim();
        },
        () => {
          if (entries.get(key) === entry) entry.until = Math.min(entry.until, now() + failureTtlMs);
        },
      );
      return value;
    },
    dropPrefix(prefix) {
      for (const key of [...entries.keys()]) if (key.startsWith(prefix)) remove(key);
    },
  };
}

/** Events held in the cache in all, and characters of ICS text: bounded whatever users ask for. */
const EVENTS_CACHE_MAX = 200_000;
const ICS_CACHE_MAX_CHARS = 50_000_000;

/** The calendar module's caches, by connection id; a connection that changes is forgotten in both. */
export function createCalendarCaches(options: { ttlMs: number; now(): number }) {
  const { ttlMs, now } = options;
  const events = createCache<{ events: SourceEvent[]; notes: string[] }>({
    ttlMs,
    maxWeight: EVENTS_CACHE_MAX,
    weigh: ({ events }) => events.length,
    now,
  });
  // The calendars' text, parsed again in the ICS worker only when another day is asked for.
  const ics = createCache<string>({
    ttlMs,
    maxWeight: ICS_CACHE_MAX_CHARS,
    weigh: (t) => t.length,
    now,
  });
  return {
    events,
    ics,
    forget(id: number) {
      events.dropPrefix(`${id}:`);
      ics.dropPrefix(`${id}:`);
    },
  };
}

export type CalendarCaches = ReturnType<typeof createCalendarCaches>;
