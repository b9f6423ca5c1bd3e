// One queue in front of each model endpoint, for the whole installation (issue 33): at most
// LLM_CONCURRENCY calls at once, whichever instance or worker makes them. A person waiting in the
// chat goes first, then research, then background work (daily messages, learning), and the last
// quarter of the permits is kept for the chat, so a fan-out of background calls never makes a
// person wait behind it; within a priority, the user with the fewest calls running goes first. The
// rows live in the database (model.gate.repo.ts); a process looks at the queue when one of its calls
// asks or gives a permit back, and every POLL_MS while it has calls waiting (a permit given back by
// another process is found then).
import { hostname } from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import type { ModelGateRepo } from './model.gate.repo.ts';
import type { Llm } from './model.types.ts';

export const PRIORITY = { chat: 0, research: 1, background: 2 } as const;
export type Priority = keyof typeof PRIORITY;

// A permit another process gives back is found at the next look: often enough that a fan-out keeps
// the model busy (one pass is a single statement, and only processes with calls waiting look).
const POLL_MS = 50;
const HEARTBEAT_MS = 5000;
/** A row whose process has not refreshed it for this long is dropped (the process died). */
const STALE_SECONDS = 20;
/** A call that waits this long says so (onWait): research shows it in its progress. */
const WAIT_NOTICE_MS = 1000;

/** Permits only the chat may take: a quarter of them, at least one when there are two or more. */
export const chatReserve = (limit: number) => (limit >= 2 ? Math.max(1, Math.floor(limit / 4)) : 0);

export interface Acquire {
  priority: Priority;
  userId?: number;
  signal?: AbortSignal;
  /** Called with true once the call has waited WAIT_NOTICE_MS for its permit, and with false when it gets it. */
  onWait?: (waiting: boolean) => void;
}

export interface ModelGate {
  /** Waits for a permit; the function returned gives it back. */
  acquire(o: Acquire): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

interface Waiter {
  resolve: () => void;
  reject: (err: unknown) => void;
}

export function createModelGate(deps: {
  repo: ModelGateRepo;
  endpoint: string;
  limit: number;
  log: FastifyBaseLogger;
  pollMs?: number;
}): ModelGate {
  const { repo, endpoint, limit, log } = deps;
  const holder = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
  const reserve = chatReserve(limit);
  const waiters = new Map<number, Waiter>();
  /** Permits given back, sent with the next pass. */
  const ended: number[] = [];
  const limits = { endpoint, limit, reserve, staleSeconds: STALE_SECONDS };
  let held = 0;
  const notGivenBack = (err: unknown) => log.warn({ err }, 'model queue: a permit was not given back (it goes stale)');
  let passing: Promise<void> | null = null;
  let again = false;

  /** The waiters whose rows are granted go (a grant found late is returned again by every pass). */
  function wake(granted: Set<number>) {
    for (const id of granted) {
      const waiter = waiters.get(id);
      waiters.delete(id);
      waiter?.resolve();
    }
  }

  /** One pass of the queue (giving back what ended); passes asked for while one runs make one more. */
  function pass(): Promise<void> {
    if (passing) {
      again = true;
      return passing;
    }
    passing = (async () => {
      do {
        again = false;
        const release = ended.shift();
        try {
          wake(await repo.pass({ ...limits, mine: [...waiters.keys()], release }));
        } catch (err) {
          if (release !== undefined) notGivenBack(err);
          else log.warn({ err }, 'model queue: a pass failed (tried again shortly)');
        }
      } while (ended.length || (again && waiters.size));
    })().finally(() => {
      passing = null;
    });
    return passing;
  }

  const poll = setInterval(() => {
    if (waiters.size) void pass();
  }, deps.pollMs ?? POLL_MS);
  const heartbeat = setInterval(() => {
    if (waiters.size || held) repo.heartbeat(holder).catch((err) => log.warn({ err }, 'model queue: heartbeat failed'));
  }, HEARTBEAT_MS);
  poll.unref();
  heartbeat.unref();

  /** Waits for the permit `id` (not granted when asked), saying so after a while; an abort gives it up. */
  async function waitFor(id: number, signal: AbortSignal | undefined, onWait: Acquire['onWait']) {
    const granted = new Promise<void>((resolve, reject) => waiters.set(id, { resolve, reject }));
    let noticed = false;
    const notice =
      onWait &&
      setTimeout(() => {
        noticed = true;
        onWait(true);
      }, WAIT_NOTICE_MS);
    // Given up while waiting (the user stopped the answer): the row goes, nothing is held.
    const abort = () => {
      const waiter = waiters.get(id);
      if (!waiter) return;
      waiters.delete(id);
      ended.push(id);
      void pass();
      waiter.reject(signal?.reason ?? new Error('aborted'));
    };
    signal?.addEventListener('abort', abort, { once: true });
    if (signal?.aborted) abort();
    try {
      await granted;
    } finally {
      if (notice) clearTimeout(notice);
      signal?.removeEventListener('abort', abort);
    }
    if (noticed) onWait?.(false);
  }

  return {
    async acquire({ priority, userId, signal, onWait }) {
      signal?.throwIfAborted();
      const asked = await repo.ask({
        ...limits,
        mine: [...waiters.keys()],
        wait: { priority: PRIORITY[priority], userId: userId ?? null, holder },
      });
      const { id } = asked;
      wake(asked.granted);
      if (!asked.granted.has(id)) await waitFor(id, signal, onWait);
      held++;
      let given = false;
      return async () => {
        if (given) return;
        given = true;
        held--;
        // With no call of its own waiting, the row just goes (no lock, no pass): processes with calls
        // waiting find the permit at their next look, as they find any other process's.
        if (!waiters.size) {
          await repo.release(id).catch(notGivenBack);
          return;
        }
        ended.push(id);
        await pass();
      };
    },
    async close() {
      clearInterval(poll);
      clearInterval(heartbeat);
      for (const waiter of waiters.values()) waiter.reject(new Error('Daybook is shutting down'));
      waiters.clear();
      await repo.releaseAll(holder).catch(() => {});
    },
  };
}

/** `llm` with every call behind `gate` at `priority`; each call's userId and onWait go to the gate. */
export function gateLlm(llm: Llm, gate: ModelGate, priority: Priority): Llm {
  // A permit goes back without its caller waiting for it (failures are logged where it is given
  // back): the answer is stored and shown one round trip sooner.
  /** `run` while holding a permit. */
  const holding = async <T>(o: Omit<Acquire, 'priority'>, run: () => Promise<T>): Promise<T> => {
    const release = await gate.acquire({ priority, ...o });
    try {
      return await run();
    } finally {
      void release();
    }
  };
  const gated: Llm = {
    ...llm,
    async *stream(messages, signal, options = {}) {
      const release = await gate.acquire({ priority, userId: options.userId, signal, onWait: options.onWait });
      try {
        yield* llm.stream(messages, signal, options);
      } finally {
        void release();
      }
    },
    structured: (request) =>
      holding({ userId: request.userId, signal: request.signal, onWait: request.onWait }, () =>
        llm.structured(request),
      ),
  };
  const embed = llm.embed;
  if (embed) gated.embed = (texts, signal) => holding({ signal }, () => embed(texts, signal));
  return gated;
}
