// What the jobs module's users see: a queue's settings, a job as its handler gets it, and what
// sending and looking up a job give back.

export type QueuePolicy = 'standard' | 'singleton' | 'stately' | 'short';

export interface QueueOptions {
  /** Runs after the first that fail (0: none). */
  retryLimit: number;
  /** Seconds before a retry; with `retryBackoff` it doubles at each retry (with jitter). */
  retryDelay: number;
  retryBackoff: boolean;
  /**
   * A run that lasts longer fails (its signal aborts, and it is retried if retries are left); a
   * run whose process died is failed or retried the same way once this has passed.
   */
  expireInSeconds: number;
  /**
   * pg-boss's queue policy (default `standard`). `singleton` and `stately` run one job per
   * `singletonKey` at a time, but pg-boss 10 then holds back the whole queue, other keys too, while
   * the next job's key is busy: for "one per user" with many users, keep `standard` and let the
   * handler claim its work (as the research repo does).
   */
  policy?: QueuePolicy;
  /** How many of this queue's jobs one worker process runs at once (default 1). */
  concurrency?: number;
}

export interface JobContext<T> {
  id: string;
  data: T;
  /** 0 on the first run, 1 on the first retry... */
  retryCount: number;
  retryLimit: number;
  /**
   * Aborted when the process shuts down (throw, e.g. `signal.throwIfAborted()`, and the job runs
   * again later without using up a retry; returning means it is done) or the run outlives
   * `expireInSeconds` (it fails).
   */
  signal: AbortSignal;
}

export type JobHandler<T> = (job: JobContext<T>) => Promise<void>;

/** A job that will not run again: its retries are used up, or it was failed for good. */
export interface FailedJob<T> {
  data: T;
  /** The last run's error message. */
  error: string;
}

export interface SendOptions {
  /** The key the queue's policy counts by (with `short`/`stately`, a refused send returns null). */
  singletonKey?: string;
  /** Not before this time, or this many seconds from now. */
  startAfter?: Date | number;
}

export type JobState = 'created' | 'retry' | 'active' | 'completed' | 'cancelled' | 'failed';

export interface JobInfo {
  id: string;
  state: JobState;
  retryCount: number;
  retryLimit: number;
  /** When it may run (next). */
  startAfter: Date;
  /** Why the last run failed, for a job in `retry` or `failed`. */
  error?: string;
}
