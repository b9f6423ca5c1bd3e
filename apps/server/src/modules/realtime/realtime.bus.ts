// The realtime bus: how what happens for a user (a chat event, a session that ended, a settings
// change) reaches that user's open sockets on every process. Publishers never know where the sockets
// are; each process delivers to its own. One interface, three carriers:
// - memory: this process only (one instance, the embedded database);
// - postgres: events written to `realtime_events`, NOTIFY carries only their ids, every instance keeps
//   one listening connection and replays what it missed after a reconnect;
// - redis: pub/sub, for large installations that run Redis anyway (no replay: a reconnect loses
//   what was sent meanwhile; the tabs catch up from the history when they reconnect).
import { randomBytes } from 'node:crypto';
import type { TServerEvent } from '@daybook/contracts';
import type { FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { Query } from '../../db/database.ts';
import type { EndedSessions } from '../accounts/sessions.service.ts';
import type { Channel } from '../chat/chat.repo.ts';

/** What travels on the bus; everything is plain JSON. */
export type RealtimeEvent =
  | { type: 'chat'; userId: number; channel: Channel; event: TServerEvent }
  | { type: 'sessions-ended'; ended: EndedSessions }
  | { type: 'user-settings'; userId: number; settings: Record<string, unknown> }
  /** The user stopped an answer: the instance writing it ends it (see chat.hub.ts). */
  | { type: 'chat-stop'; userId: number; channel: Channel; replyTo?: number; at?: number }
  /** A message is to be answered again, or that answer will not come: tabs that connect show it (see chat.hub.ts). */
  | { type: 'chat-awaiting'; userId: number; channel: Channel; messageId: number; awaiting: boolean }
  /** A research was cancelled: the process running it stops at once (see research.service.ts). */
  | { type: 'research-cancel'; researchId: number };

export interface RealtimeBus {
  readonly kind: 'memory' | 'postgres' | 'redis';
  /** Delivers to this process's handlers at once (in order) and to every other process soon after. */
  publish(event: RealtimeEvent): void;
  /** This process's delivery; events reach it in the order each publisher sent them. */
  subscribe(handler: (event: RealtimeEvent) => void): void;
  start(): Promise<void>;
  /** Sends what is still queued, then stops listening. */
  close(): Promise<void>;
}

/** The NOTIFY channel; a notification is `<origin>:<id>,<id>,...`. */
const PG_CHANNEL = 'daybook_realtime';
const REDIS_CHANNEL = 'daybook:realtime';
/** Events per INSERT (and per notification: ids stay far below NOTIFY's 8000-byte limit). */
const BATCH = 200;
/** Kept this long for instances that reconnect; older ones are deleted. */
const KEEP_MINUTES = 5;
const PRUNE_MS = 60_000;
/** Ids already delivered, remembered so a replay after a reconnect delivers nothing twice. */
const RECENT_IDS = 20_000;
const RECONNECT_MAX_MS = 10_000;

/** Half of a surrogate pair, which jsonb refuses as it refuses NUL. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * For JSON.stringify: text jsonb cannot hold becomes U+FFFD, as it would in a text column. One
 * event's model output with a NUL would otherwise fail the INSERT of every event in its batch.
 */
function jsonbSafe(_key: string, value: unknown) {
  return typeof value === 'string' ? value.replace(LONE_SURROGATE, '\ufffd').replaceAll('\0', '\ufffd') : value;
}

function localDelivery(log: FastifyBaseLogger) {
  const handlers: Array<(event: RealtimeEvent) => void> = [];
  return {
    subscribe: (handler: (event: RealtimeEvent) => void) => void handlers.push(handler),
    deliver(event: RealtimeEvent) {
      for (const handler of handlers) {
        try {
          handler(event);
        } catch (err) {
          // A row that is no event at all (null, a string) must not stop the ones read with it.
          log.error({ err, type: (event as Partial<RealtimeEvent> | null)?.type }, 'realtime handler failed');
        }
      }
    },
  };
}

export function createMemoryBus(log: FastifyBaseLogger): RealtimeBus {
  const local = localDelivery(log);
  return {
    kind: 'memory',
    publish: local.deliver,
    subscribe: local.subscribe,
    start: async () => {},
    close: async () => {},
  };
}

/**
 * PostgreSQL LISTEN/NOTIFY. Events from one process are written in order by one flush loop, so
 * their ids and notifications keep that order; the listener reads each notification's events in
 * one query and delivers them in id order.
 */
export function createPostgresBus(deps: {
  url: string;
  /** The app's pool: writes and pruning. The listener has a connection of its own. */
  query: Query;
  log: FastifyBaseLogger;
  /** Shorter in tests. */
  pruneMs?: number;
}): RealtimeBus {
  const { log, query } = deps;
  const origin = randomBytes(6).toString('hex');
  const local = localDelivery(log);
  const outbox: RealtimeEvent[] = [];
  let flushing: Promise<void> | null = null;
  let closed = false;
  let client: pg.Client | null = null;
  let reconnectTimer: NodeJS.Timeout | undefined;
  let pruneTimer: NodeJS.Timeout | undefined;
  let attempt = 0;
  let connectedOnce = false;
  /** The highest id seen: a reconnect replays from here. */
  let lastId = 0n;
  const recent = new Set<string>();
  /** Reads run one after another, so delivery keeps id order. */
  let reading: Promise<void> = Promise.resolve();

  async function flush() {
    while (outbox.length) {
      const batch = outbox.splice(0, BATCH);
      try {
        // Ids are taken in the batch's order (the sort is below the insert's projection).
        await query(
          `WITH e AS (
             INSERT INTO realtime_events (origin, payload)
             SELECT $1, p FROM (SELECT p FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS t(p, n) ORDER BY n) s
             RETURNING id
           )
           SELECT pg_notify('${PG_CHANNEL}', $1 || ':' || string_agg(id::text, ',' ORDER BY id)) FROM e`,
          [origin, JSON.stringify(batch, jsonbSafe)],
        );
      } catch (err) {
        // The tabs on this instance have them; the others' tabs catch up from the history.
        log.error({ err, events: batch.length }, 'realtime events could not be sent to other instances');
      }
    }
    flushing = null;
  }

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
      if (row.origin !== origin) local.deliver(row.payload);
    }
  }

  // (Rows select `id::text`, as JSON has no 64-bit integers: order by the column, not that text.)
  function read(sql: string, params: unknown[]) {
    reading = reading.then(async () => {
      const c = client;
      if (!c) return;
      try {
        const result = await c.query<{ id: string; origin: string; payload: RealtimeEvent }>(sql, params);
        deliverRows(result.rows);
      } catch (err) {
        log.warn({ err }, 'realtime events could not be read');
      }
    });
  }

  function onNotification(message: pg.Notification) {
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
  }

  async function connect() {
    const c = new pg.Client({ connectionString: deps.url, application_name: 'daybook-realtime' });
    c.on('error', (err) => {
      log.warn({ err }, 'realtime listener connection failed');
      void reconnect(c);
    });
    c.on('end', () => void reconnect(c));
    c.on('notification', onNotification);
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
      if (row?.max && BigInt(row.max) > lastId) lastId = BigInt(row.max);
    } else {
      // Back after a drop: what the other instances sent meanwhile, in order.
      read(
        `SELECT id::text, origin, payload FROM realtime_events WHERE id > $1 AND origin <> $2 ORDER BY realtime_events.id LIMIT 10000`,
        [lastId.toString(), origin],
      );
    }
  }

  async function reconnect(dropped: pg.Client) {
    if (closed || client !== dropped) return;
    client = null;
    dropped.removeAllListeners('notification');
    dropped.end().catch(() => {});
    connectLater();
  }

  /** Tries again with a growing pause (at most 10 s) until it is connected or closed. */
  function connectLater() {
    const delay = Math.min(RECONNECT_MAX_MS, 250 * 2 ** attempt++);
    reconnectTimer = setTimeout(() => {
      if (closed) return;
      connect().catch((err: unknown) => {
        log.warn({ err }, 'realtime listener could not connect');
        connectLater();
      });
    }, delay);
    reconnectTimer.unref();
  }

  async function prune() {
    await query(`DELETE FROM realtime_events WHERE created_at < now() - interval '${KEEP_MINUTES} minutes'`).catch(
      (err: unknown) => log.warn({ err }, 'old realtime events could not be deleted'),
    );
  }

  return {
    kind: 'postgres',
    publish(event) {
      local.deliver(event);
      if (closed) return;
      outbox.push(event);
      // After the current task: what it publishes goes in one statement.
      flushing ??= Promise.resolve().then(flush);
    },
    subscribe: local.subscribe,
    async start() {
      await connect().catch((err: unknown) => {
        // Not fatal: this instance's own tabs are served; the others' events arrive once it connects.
        log.error({ err }, 'realtime listener could not connect; retrying');
        connectLater();
      });
      pruneTimer = setInterval(() => void prune(), deps.pruneMs ?? PRUNE_MS);
      pruneTimer.unref();
    },
    async close() {
      clearInterval(pruneTimer);
      clearTimeout(reconnectTimer);
      await flushing;
      closed = true;
      await reading;
      const c = client;
      client = null;
      await c?.end().catch(() => {});
    },
  };
}

/** Redis pub/sub: one connection publishes, one subscribes. */
export function createRedisBus(deps: { url: string; log: FastifyBaseLogger }): RealtimeBus {
  const { log } = deps;
  const origin = randomBytes(6).toString('hex');
  const local = localDelivery(log);
  const options = { lazyConnect: true, maxRetriesPerRequest: 2, connectionName: 'daybook-realtime' };
  const publisher = new Redis(deps.url, options);
  const subscriber = new Redis(deps.url, options);
  for (const [name, connection] of [
    ['publisher', publisher],
    ['subscriber', subscriber],
  ] as const) {
    connection.on('error', (err) => log.warn({ err: { message: err.message } }, `realtime redis ${name} failed`));
  }
  subscriber.on('message', (_channel: string, raw: string) => {
    try {
      const message = JSON.parse(raw) as { origin: string; event: RealtimeEvent };
      if (message.origin !== origin) local.deliver(message.event);
    } catch (err) {
      log.warn({ err }, 'unreadable realtime message');
    }
  });
  return {
    kind: 'redis',
    publish(event) {
      local.deliver(event);
      publisher
        .publish(REDIS_CHANNEL, JSON.stringify({ origin, event }))
        .catch((err: Error) => log.error({ err: { message: err.message } }, 'realtime event could not be published'));
    },
    subscribe: local.subscribe,
    async start() {
      await Promise.all([publisher.connect(), subscriber.connect()]);
      await subscriber.subscribe(REDIS_CHANNEL);
    },
    async close() {
      await Promise.allSettled([subscriber.quit(), publisher.quit()]);
    },
  };
}
