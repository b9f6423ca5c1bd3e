// Readable markdown from fetched pages. HTML goes to a small pool of worker threads
// (extract.worker.mjs: Readability + Turndown over linkedom, then defuddle, then the body's text;
// at the lowest priority on Linux), so parsing a big page never stalls chat; a page that takes too
// long costs its worker, which is replaced. Plain text passes through.
import { channel } from 'node:diagnostics_channel';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/**
 * Published once per page a worker extracted: `{ url, ms, cpuMs }`, its time in the worker and the
 * worker's CPU time for it (NaN where the OS does not tell). The research bench reads it.
 */
export const extractTimings = channel('daybook:research:extract');

export interface ExtractInput {
  body: string;
  contentType: string;
  url: string;
}

export interface Extracted {
  title: string;
  markdown: string;
}

export interface Extractor {
  extract(input: ExtractInput): Promise<Extracted>;
  /** Stops the workers; pending and later extractions fail with code 'closed'. */
  close(): Promise<void>;
}

export interface ExtractorOptions {
  /** Worker threads (default min(2, cores)). */
  workers?: number;
  /** Time one page may take in a worker (default 5 s); past it the worker is terminated and replaced. */
  timeoutMs?: number;
  /** Pages waiting for a worker (default 100); beyond it extract fails with code 'busy'. */
  maxQueue?: number;
  /** Cap on the markdown of one page, in characters (default 200,000). */
  maxChars?: number;
}

export type ExtractErrorCode = 'timeout' | 'failed' | 'busy' | 'closed';

export class ExtractError extends Error {
  constructor(
    readonly code: ExtractErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ExtractError';
  }
}

const WORKER_URL = new URL('./extract.worker.mjs', import.meta.url);

interface Task {
  id: number;
  input: ExtractInput;
  resolve: (value: Extracted) => void;
  reject: (err: Error) => void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  task?: Task;
  timer?: NodeJS.Timeout;
  /** Why the worker died, when it did on its own. */
  crash?: string;
}

/** The first non-empty line, as a title for a plain-text page. */
const firstLine = (text: string) =>
  (
    text
      .split('\n')
      .map((l) => l.trim())
      .find(Boolean) ?? ''
  ).slice(0, 200);

export function createExtractor(options: ExtractorOptions = {}): Extractor {
  const size = Math.max(1, options.workers ?? Math.min(2, availableParallelism()));
  const timeoutMs = options.timeoutMs ?? 5000;
  const maxQueue = options.maxQueue ?? 100;
  const maxChars = options.maxChars ?? 200_000;
  const queue: Task[] = [];
  const slots = new Set<Slot>();
  let nextId = 0;
  let closed = false;

  function settle(slot: Slot): Task | undefined {
    const task = slot.task;
    clearTimeout(slot.timer);
    slot.task = undefined;
    slot.timer = undefined;
    return task;
  }

  function spawn() {
    // Idle workers do not keep the process alive; busy or starting ones do (see dispatch).
    const worker = new Worker(WORKER_URL, { resourceLimits: { maxOldGenerationSizeMb: 512 } });
    const slot: Slot = { worker, ready: false };
    slots.add(slot);
    worker.on(
      'message',
      (msg: {
        ready?: true;
        id?: number;
        ok?: boolean;
        title?: string;
        markdown?: string;
        error?: string;
        ms?: number;
        cpuMs?: number;
      }) => {
        if (msg.ready) {
          slot.ready = true;
        } else if (slot.task && msg.id === slot.task.id) {
          const task = settle(slot) as Task;
          if (extractTimings.hasSubscribers)
            extractTimings.publish({ url: task.input.url, ms: msg.ms, cpuMs: msg.cpuMs });
          if (msg.ok) task.resolve({ title: msg.title ?? '', markdown: msg.markdown ?? '' });
          else task.reject(new ExtractError('failed', `Could not extract ${task.input.url}: ${msg.error}`));
        }
        dispatch();
      },
    );
    worker.on('error', (err) => {
      slot.crash = err.message;
    });
    worker.on('exit', () => {
      slots.delete(slot);
      const task = settle(slot);
      const why = slot.crash ?? 'exited';
      task?.reject(new ExtractError('failed', `The extraction worker stopped (${why})`));
      if (closed) return;
      // A worker that cannot even start would fail again: fail the waiting pages instead of looping.
      if (!slot.ready) {
        for (const t of queue.splice(0))
          t.reject(new ExtractError('failed', `The extraction worker could not start (${why})`));
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
        // A stuck page: give up on it and on its worker; a new worker takes the rest of the queue.
        settle(slot);
        slots.delete(slot);
        task.reject(new ExtractError('timeout', `Extracting ${task.input.url} took longer than ${timeoutMs} ms`));
        void slot.worker.terminate();
        dispatch();
      }, timeoutMs);
      slot.worker.postMessage({ id: task.id, html: task.input.body, url: task.input.url, maxChars });
    }
    const starting = [...slots].filter((s) => !s.ready).length;
    for (let i = starting; i < queue.length && slots.size < size; i++) spawn();
    for (const slot of slots) {
      if (slot.task || (!slot.ready && queue.length)) slot.worker.ref();
      else slot.worker.unref();
    }
  }

  return {
    extract(input) {
      if (closed) return Promise.reject(new ExtractError('closed', 'The extractor is closed'));
      const type = input.contentType.toLowerCase();
      if (type === 'text/plain') {
        const text = input.body.replace(/\r\n?/g, '\n').trim();
        return Promise.resolve({ title: firstLine(text), markdown: text.slice(0, maxChars) });
      }
      if (queue.length >= maxQueue) {
        return Promise.reject(new ExtractError('busy', 'Too many pages are waiting to be extracted'));
      }
      return new Promise((resolve, reject) => {
        queue.push({ id: nextId++, input, resolve, reject });
        dispatch();
      });
    },
    async close() {
      closed = true;
      for (const task of queue.splice(0)) task.reject(new ExtractError('closed', 'The extractor is closed'));
      const stopping = [...slots].map((slot) => {
        settle(slot)?.reject(new ExtractError('closed', 'The extractor is closed'));
        return slot.worker.terminate();
      });
      slots.clear();
      await Promise.all(stopping);
    },
  };
}
