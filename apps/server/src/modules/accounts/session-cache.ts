// Signed-in sessions, kept in this process for a few seconds so that a page's reads do not each
// look the session up again (issue 15: the lookup was a round trip before any work).
//
// It is only a copy, and it must never outlive what it copies:
// - the database tells every instance at commit when a session or a user changes, from any process
//   (triggers in the session_cache migration; this module LISTENs), and the copy is dropped;
// - this process drops its copies itself, before answering, when it changes them (sign-in, sign-out,
//   a password change, any write request of the user, any admin write);
// - without a listening connection nothing is cached (a notice could be missed), and everything is
//   forgotten when the connection comes back;
// - a load that started before a change is not stored (the generation check below);
// - requests that change something always read the database (see plugins/session.ts).
import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import type { SessionWithUser } from './accounts.repo.ts';

const CHANNEL = 'daybook_auth';
const RECONNECT_MAX_MS = 10_000;

export interface SessionCache {
  /** A copy of the cached row (callers may change it), or undefined. */
  get(id: string): SessionWithUser | undefined;
  /** Taken before a load; `put` stores the load's result only if nothing was forgotten meanwhile. */
  ticket(): number;
  put(ticket: number, id: string, row: SessionWithUser): void;
  forgetSession(id: string): void;
  forgetUser(userId: number): void;
  clear(): void;
  /** Whether it is listening, hence caching. */
  readonly active: boolean;
  start(): Promise<void>;
  close(): Promise<void>;
}

interface Entry {
  row: SessionWithUser;
  until: number;
}

const copy = (row: SessionWithUser): SessionWithUser => ({
  ...row,
  data: structuredClone(row.data),
  user: row.user && { ...row.user },
});

/**
 * The cache without a listener: for tests of its bookkeeping, and the base of the listening one.
 * `now` is a monotonic clock in ms.
 */
export function createSessionStore(opts: { ttlMs: number; maxEntries: number; now?: () => number }) {
  const now = opts.now ?? (() => performance.now());
  const entries = new Map<string, Entry>();
  const byUser = new Map<number, Set<string>>();
  let generation = 0;
  let active = true;

  function drop(id: string) {
    const entry = entries.get(id);
    if (!entry) return;
    entries.delete(id);
    const userId = entry.row.userId;
    if (userId !== null) {
      const ids = byUser.get(userId);
      ids?.delete(id);
      if (ids?.size === 0) byUser.delete(userId);
    }
  }

  const store = {
    get(id: string) {
      const entry = entries.get(id);
      if (!entry) return undefined;
      if (entry.until <= now()) {
        drop(id);
        return undefined;
      }
      return copy(entry.row);
    },
    ticket: () => generation,
    put(ticket: number, id: string, row: SessionWithUser) {
      if (!active || ticket !== generation) return;
      drop(id);
      // The oldest entry makes room (Map keeps insertion order).
      if (entries.size >= opts.maxEntries) drop(entries.keys().next().value as string);
      entries.set(id, { row: copy(row), until: now() + opts.ttlMs });
      if (row.userId !== null) {
        const ids = byUser.get(row.userId) ?? new Set<string>();
        byUser.set(row.userId, ids);
        ids.add(id);
      }
    },
    forgetSession(id: string) {
      generation++;
      drop(id);
    },
    forgetUser(userId: number) {
      generation++;
      for (const id of byUser.get(userId) ?? []) drop(id);
    },
    clear() {
      generation++;
      entries.clear();
      byUser.clear();
    },
    get active() {
      return active;
    },
    setActive(value: boolean) {
      if (active !== value) store.clear();
      active = value;
    },
    get size() {
      return entries.size;
    },
  };
  return store;
}

/** A notice from the triggers: "s:<session id>", "u:<user id>" or "*". */
export function applyNotice(store: Pick<SessionCache, 'forgetSession' | 'forgetUser' | 'clear'>, payload: string) {
  if (payload.startsWith('s:')) store.forgetSession(payload.slice(2));
  else if (/^u:\d+$/.test(payload)) store.forgetUser(Number(payload.slice(2)));
  else store.clear();
}

export function createSessionCache(deps: {
  url: string;
  ttlMs: number;
  maxEntries?: number;
  log: FastifyBaseLogger;
}): SessionCache {
  const store = createSessionStore({ ttlMs: deps.ttlMs, maxEntries: deps.maxEntries ?? 10_000 });
  // Nothing is cached until the listener is connected.
  store.setActive(false);
  let client: pg.Client | null = null;
  let closed = false;
  let attempt = 0;
  let timer: NodeJS.Timeout | undefined;

  async function connect() {
    // Keepalive: a connection that died silently would stop the notices without an error.
    const c = new pg.Client({ connectionString: deps.url, application_name: 'daybook-session-cache', keepAlive: true });
    c.on('error', (err) => {
      deps.log.warn({ err: { message: err.message } }, 'session cache listener connection failed');
      dropped(c);
    });
    c.on('end', () => dropped(c));
    c.on('notification', (message) => applyNotice(store, message.payload ?? '*'));
    try {
      await c.connect();
      await c.query(`LISTEN ${CHANNEL}`);
    } catch (err) {
      c.removeAllListeners('notification');
      c.end().catch(() => {});
      throw err;
    }
    if (closed) {
      c.end().catch(() => {});
      return;
    }
    client = c;
    attempt = 0;
    // Listening from here: what changed before is unknown, so start empty.
    store.setActive(true);
  }

  function dropped(c: pg.Client) {
    if (client !== c) return;
    client = null;
    store.setActive(false);
    c.removeAllListeners('notification');
    c.end().catch(() => {});
    if (!closed) connectLater();
  }

  function connectLater() {
    const delay = Math.min(RECONNECT_MAX_MS, 250 * 2 ** attempt++);
    timer = setTimeout(() => {
      if (closed) return;
      connect().catch((err: Error) => {
        deps.log.warn({ err: { message: err.message } }, 'session cache listener could not connect');
        connectLater();
      });
    }, delay);
    timer.unref();
  }

  return {
    get: store.get,
    ticket: store.ticket,
    put: store.put,
    forgetSession: store.forgetSession,
    forgetUser: store.forgetUser,
    clear: store.clear,
    get active() {
      return store.active;
    },
    async start() {
      try {
        await connect();
      } catch (err) {
        // The app works without it (every request reads the database) and keeps trying.
        deps.log.warn({ err: { message: (err as Error).message } }, 'session cache listener could not connect');
        connectLater();
      }
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      store.setActive(false);
      const c = client;
      client = null;
      if (c) {
        c.removeAllListeners();
        c.on('error', () => {});
        await c.end().catch(() => {});
      }
    },
  };
}
