// A failed run's error as pg-boss stores it in the job's output, written and read back.

/** The message of a job's stored output: ours (`{message}`), or pg-boss's (`{value: {message}}`). */
export function errorMessage(output: unknown): string | undefined {
  if (!output || typeof output !== 'object') return undefined;
  const o = output as { message?: unknown; value?: { message?: unknown } };
  if (typeof o.message === 'string') return o.message;
  return typeof o.value?.message === 'string' ? o.value.message : undefined;
}

export const errorOutput = (err: unknown) =>
  err instanceof Error ? { name: err.name, message: err.message } : { message: String(err) };
