// The part of autocannon's API (it ships no types) that scripts/bench/load.ts uses.
declare module 'autocannon' {
  interface Options {
    url: string;
    connections?: number;
    /** Seconds. */
    duration?: number;
    headers?: Record<string, string>;
    /** The requests each connection sends in turn; setupRequest may change each before it goes. */
    requests?: Array<{ method?: string; path?: string; setupRequest?: (request: RequestParams) => RequestParams }>;
  }
  interface RequestParams {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
  }
  interface Histogram {
    average: number;
    p50: number;
    p90: number;
    p99: number;
    max: number;
  }
  interface Result {
    /** Seconds the run took. */
    duration: number;
    latency: Histogram;
    requests: Histogram & { total: number };
    '2xx': number;
    non2xx: number;
    errors: number;
    timeouts: number;
  }
  interface Instance extends PromiseLike<Result> {
    /** Each response: its status, size and time in ms (a float). */
    on(
      event: 'response',
      listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void,
    ): this;
  }
  function autocannon(options: Options): Instance;
  export default autocannon;
}
