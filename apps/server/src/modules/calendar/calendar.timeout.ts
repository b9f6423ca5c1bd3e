// A deadline over a whole provider exchange or calendar read, whatever the library under it allows.
import { ProviderApiError } from './calendar.types.ts';

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ProviderApiError('unavailable', `${what} took longer than ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
