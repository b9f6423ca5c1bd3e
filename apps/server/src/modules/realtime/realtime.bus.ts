// The realtime bus: how what happens for a user (a chat event, a session that ended, a settings
// change) reaches that user's open sockets on every process. Publishers never know where the sockets
// are; each process delivers to its own. One interface, three carriers:
// - memory: this process only (one instance, the embedded database);
// - postgres: events written to `realtime_events`, NOTIFY carries only their ids, every instance keeps
//   one listening connection and replays what it missed after a reconnect;
// - redis: pub/sub, for large installations that run Redis anyway (no replay: a reconnect loses
//   what was sent meanwhile; the tabs catch up from the history when they reconnect).
import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';
import type { Query } from '../../db/database.ts';
import { createRealtimeListener } from './realtime.listen.repo.ts';
import { PRUNE_MS, startPruning } from './realtime.prune.repo.ts';
import { createRealtimeOutbox } from './realtime.publish.repo.ts';
import type { RealtimeEvent } from './realtime.types.ts';

export type { RealtimeEvent } from './realtime.types.ts';

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

const REDIS_CHANNEL = 'daybook:realtime';

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
  let closed = false;
  let stopPruning: (() => void) | undefined;
  const outbox = createRealtimeOutbox({ query, log, origin });
  const listener = createRealtimeListener({
    url: deps.url,
    query,
    log,
    origin,
    deliver: local.deliver,
    closed: () => closed,
  });

  return {
    kind: 'postgres',
    publish(event) {
      local.deliver(event);
      if (closed) return;
      outbox.send(event);
    },
    subscribe: local.subscribe,
    async start() {
      await listener.start();
      stopPruning = startPruning({ query, log, everyMs: deps.pruneMs ?? PRUNE_MS });
    },
    async close() {
      stopPruning?.();
      listener.stopRetrying();
      await outbox.flushing();
      closed = true;
      await listener.close();
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
