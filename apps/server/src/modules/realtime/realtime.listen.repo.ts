// The PostgreSQL bus's listen path: one connection of its own LISTENs, reads each notification's
// events (other instances' ones are delivered here, in id order), reconnects with a growing pause,
// and after a reconnect catches up on what it missed.
import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import type { Query } from '../../db/database.ts';
import { PG_CHANNEL } from './realtime.publish.repo.ts';
import type { RealtimeEvent } from './realtime.types.ts';

/** Ids already delivered, remembered so a replay after a reconnect delivers nothing twice. */
const RECENT_IDS = 20_000;
const RECONNECT_MAX_MS = 10_000;

/**
 * Reads the events that notifications name, and after a reconnect what was missed, through the
 * listening connection (`client`): other instances' events are delivered in id order, each once.
 */
function createEventReader(deps: {
  log: FastifyBaseLogger;
  origin: string;
  deliver: (event: RealtimeEvent) => void;
  client: () => pg.Client | null;
}) {
  const { log, origin } = deps;
  /** The highest id seen: a reconnect replays from here. */
  let lastId = 0n;
  const recent = new Set<string>();
  /** Reads run one after another, so delivery keeps id order. */
  let reading: Promise<void> = Promise.resolve();

  function remember(id: string) {
    recent.add(id);
    if (recent.size > RECENT_IDS) recent.delete(recent.values().next().value as string);
    const n = BigInt(id);
    if (n > lastId) lastId = n;
  }

  function deliverRows(rows: Array<{ id: string; origin: string; payload: RealtimeEvent }>) {
    for (const row of rows) {
      if (recent.has(row.id)) continue;
      remember(row.id);
      if (row.origin !== origin) deps.deliver(row.payload);
    }
  }

  // (Rows select `id::text`, as JSON has no 64-bit integers: order by the column, not that text.)
  function read(sql: string, params: unknown[]) {
    reading = reading.then(async () => {
      const c = deps.client();
      if (!c) return;
      try {
        const result = await c.query<{ id: string; origin: string; payload: RealtimeEvent }>(sql, params);
        deliverRows(result.rows);
      } catch (err) {
        log.warn({ err }, 'realtime events could not be read');
      }
    });
  }

  return {
    onNotification(message: pg.Notification) {
      const [from, list] = (message.payload ?? '').split(':');
      if (!list) return;
      const ids = list.split(',');
      if (from === origin) {
        // Delivered here when published; only their ids matter (for the replay point).
        for (const id of ids) remember(id);
        return;
      }
      read(
        `SELECT id::text, origin, payload FROM realtime_events WHERE id = ANY($1::bigint[]) ORDER BY realtime_events.id`,
        [ids],
      );
    },
    /** Moves the replay point up to `max`, the highest id written so far. */
    skipTo(max: string | null) {
      if (max && BigInt(max) > lastId) lastId = BigInt(max);
    },
    /** Back after a drop: what the other instances sent meanwhile, in order. */
    catchUp() {
      read(
        `SELECT id::text, origin, payload FROM realtime_events WHERE id > $1 AND origin <> $2 ORDER BY realtime_events.id LIMIT 10000`,
        [lastId.toString(), origin],
      );
    },
    /** The reads under way. */
    reading: () => reading,
  };
}

export function createRealtimeListener(deps: {
  url: string;
  /** The app's pool, for the replay point at the first connect. */
  query: Query;
  log: FastifyBaseLogger;
  /** This process's mark on the events it wrote (they were delivered here when published). */
  origin: string;
  /** Hands another instance's event to this process's handlers. */
  deliver: (event: RealtimeEvent) => void;
  /** Whether the bus was closed: no more reconnects. */
  closed: () => boolean;
}) {
  const { log, query } = deps;
  let client: pg.Client | null = null;
  let reconnectTimer: NodeJS.Timeout | undefined;
  let attempt = 0;
  let connectedOnce = false;
  const reader = createEventReader({ log, origin: deps.origin, deliver: deps.deliver, client: () => client });

  async function connect() {
    const c = new pg.Client({ connectionString: deps.url, application_name: 'daybook-realtime' });
    c.on('error', (err) => {
      log.warn({ err }, 'realtime listener connection failed');
      void reconnect(c);
    });
    c.on('end', () => void reconnect(c));
    c.on('notification', reader.onNotification);
    try {
      await c.connect();
      await c.query(`LISTEN ${PG_CHANNEL}`);
    } catch (err) {
      c.removeAllListeners('notification');
      c.end().catch(() => {});
      throw err;
    }
    const first = !connectedOnce;
    connectedOnce = true;
    client = c;
    attempt = 0;
    if (first) {
      // From now on: what was sent before this process started is not its business.
      // (Through the pool: the listening connection may already be reading a notification's events.)
      const [row] = await query<{ max: string | null }>('SELECT max(id)::text AS max FROM realtime_events');
      reader.skipTo(row?.max ?? null);
    } else {
      reader.catchUp();
    }
  }

  async function reconnect(dropped: pg.Client) {
    if (deps.closed() || client !== dropped) return;
    client = null;
    dropped.removeAllListeners('notification');
    dropped.end().catch(() => {});
    connectLater();
  }

  /** Tries again with a growing pause (at most 10 s) until it is connected or closed. */
  function connectLater() {
    const delay = Math.min(RECONNECT_MAX_MS, 250 * 2 ** attempt++);
    reconnectTimer = setTimeout(() => {
      if (deps.closed()) return;
      connect().catch((err: unknown) => {
        log.warn({ err }, 'realtime listener could not connect');
        connectLater();
      });
    }, delay);
    reconnectTimer.unref();
  }

  return {
    async start() {
      await connect().catch((err: unknown) => {
        // Not fatal: this instance's own tabs are served; the others' events arrive once it connects.
        log.error({ err }, 'realtime listener could not connect; retrying');
        connectLater();
      });
    },
    /** No more reconnect attempts (the one pending is dropped). */
    stopRetrying() {
      clearTimeout(reconnectTimer);
    },
    /** Waits for the reads under way, then ends the connection. */
    async close() {
      await reader.reading();
      const c = client;
      client = null;
      await c?.end().catch(() => {});
    },
  };
}
