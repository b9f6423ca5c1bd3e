// The errors a job's handler throws, or finds as its signal's abort reason.

/** Thrown by a handler: the job ends failed now, without the retries left (a retry cannot help). */
export class PermanentJobError extends Error {
  override name = 'PermanentJobError';
}

/** The abort reason of a handler's signal when the process shuts down. */
export class JobsStoppingError extends Error {
  override name = 'JobsStoppingError';
}

/** The abort reason of a handler's signal when its run outlives the queue's `expireInSeconds`. */
export class JobExpiredError extends Error {
  override name = 'JobExpiredError';
}
