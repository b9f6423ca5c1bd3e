// A small pool of worker threads for work that must not stall the event loop (page extraction, ICS
// calendars). A task that takes too long costs its worker, which is terminated and replaced; a
// worker that crashes fails only its own task.
//
// Protocol: the worker posts `{ ready: true }` once started; it gets `{ id, ...message }` and
// answers `{ id, ok: true, ...result }` or `{ id, ok: false, error }`.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

export type WorkerPoolErrorCode = 'timeout' | 'failed' | 'busy' | 'closed';

export class WorkerPoolError extends Error {
  constructor(
    readonly code: WorkerPoolErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'WorkerPoolError';
  }
}

export interface WorkerPoolOptions {
  url: URL;
  /** Named in error messages ("the extraction worker"). */
  label: string;
  /** Worker threads (default min(2, cores)). */
  workers?: number;
  /** Time one task may take in a worker; past it the worker is terminated and replaced. */
  timeoutMs: number;
  /** Tasks waiting for a worker; beyond it run() fails with code 'busy'. */
  maxQueue: number;
  /** Heap of each worker, in MB (default 512). */
  maxOldGenerationSizeMb?: number;
}

export interface WorkerPool<M, R> {
  /** The worker's answer (without id and ok); rejects with a WorkerPoolError. */
  run(message: M): Promise<R>;
  /** Stops the workers; pending and later tasks fail with code 'closed'. */
  close(): Promise<void>;
}

interface Task<M, R> {
  id: number;
  message: M;
  resolve: (value: R) => void;
  reject: (err: Error) => void;
}

interface Slot<M, R> {
  worker: Worker;
  ready: boolean;
  task?: Task<M, R>;
  timer?: NodeJS.Timeout;
  /** Why the worker died, when it did on its own. */
  crash?: string;
}

export function createWorkerPool<M extends object, R extends object>(options: WorkerPoolOptions): WorkerPool<M, R> {
  const size = Math.max(1, options.workers ?? Math.min(2, availableParallelism()));
  const { timeoutMs, maxQueue, label } = options;
  const queue: Task<M, R>[] = [];
  const slots = new Set<Slot<M, R>>();
  let nextId = 0;
  let closed = false;

  function settle(slot: Slot<M, R>): Task<M, R> | undefined {
    const task = slot.task;
    clearTimeout(slot.timer);
    slot.task = undefined;
    slot.timer = undefined;
    return task;
  }

  function spawn() {
    // Idle workers do not keep the process alive; busy or starting ones do (see dispatch).
    const worker = new Worker(options.url, {
      resourceLimits: { maxOldGenerationSizeMb: options.maxOldGenerationSizeMb ?? 512 },
    });
    const slot: Slot<M, R> = { worker, ready: false };
    slots.add(slot);
    worker.on('message', (msg: { ready?: true; id?: number; ok?: boolean; error?: string }) => {
      if (msg.ready) {
        slot.ready = true;
      } else if (slot.task && msg.id === slot.task.id) {
        const task = settle(slot) as Task<M, R>;
        const { id: _id, ok, error, ...result } = msg;
        if (ok) task.resolve(result as unknown as R);
        else task.reject(new WorkerPoolError('failed', error ?? 'failed'));
      }
      dispatch();
    });
    worker.on('error', (err) => {
      slot.crash = err.message;
    });
    worker.on('exit', () => {
      slots.delete(slot);
      const task = settle(slot);
      const why = slot.crash ?? 'exited';
      task?.reject(new WorkerPoolError('failed', `The ${label} worker stopped (${why})`));
      if (closed) return;
      // A worker that cannot even start would fail again: fail the waiting tasks instead of looping.
      if (!slot.ready) {
        for (const t of queue.splice(0))
          t.reject(new WorkerPoolError('failed', `The ${label} worker could not start (${why})`));
      }
      dispatch();
    });
  }

  function dispatch() {
    for (const slot of slots) {
      if (!slot.ready || slot.task) continue;
      const task = queue.shift();
      if (!task) break;
      slot.task = task;
      slot.timer = setTimeout(() => {
        // A stuck task: give up on it and on its worker; a new worker takes the rest of the queue.
        settle(slot);
        slots.delete(slot);
        task.reject(new WorkerPoolError('timeout', `The ${label} took longer than ${timeoutMs} ms`));
        void slot.worker.terminate();
        dispatch();
      }, timeoutMs);
      slot.worker.postMessage({ ...task.message, id: task.id });
    }
    const starting = [...slots].filter((s) => !s.ready).length;
    for (let i = starting; i < queue.length && slots.size < size; i++) spawn();
    for (const slot of slots) {
      if (slot.task || (!slot.ready && queue.length)) slot.worker.ref();
      else slot.worker.unref();
    }
  }

  return {
    run(message) {
      if (closed) return Promise.reject(new WorkerPoolError('closed', `The ${label} pool is closed`));
      if (queue.length >= maxQueue)
        return Promise.reject(new WorkerPoolError('busy', `Too many ${label} tasks are waiting`));
      return new Promise<R>((resolve, reject) => {
        queue.push({ id: nextId++, message, resolve, reject });
        dispatch();
      });
    },
    async close() {
      closed = true;
      for (const task of queue.splice(0)) task.reject(new WorkerPoolError('closed', `The ${label} pool is closed`));
      const stopping = [...slots].map((slot) => {
        settle(slot)?.reject(new WorkerPoolError('closed', `The ${label} pool is closed`));
        return slot.worker.terminate();
      });
      slots.clear();
      await Promise.all(stopping);
    },
  };
}
