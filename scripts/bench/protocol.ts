// What scripts/bench.ts asks its load process (scripts/bench/load.ts) over IPC, and the answers.

export type LoadRequest =
  | {
      type: 'http';
      url: string;
      headers: Record<string, string>;
      connections: number;
      seconds: number;
    }
  | {
      /** Open loop: `rate` requests a second, evenly spaced, on up to `connections` keep-alive connections. */
      type: 'paced';
      url: string;
      headers: Record<string, string>;
      connections: number;
      rate: number;
      seconds: number;
      warmupSeconds: number;
    }
  | ({ type: 'chat'; turns: number; thinkMs: number } & ChatServer)
  | { type: 'chat-pair'; servers: [ChatServer, ChatServer]; turns: number; thinkMs: number }
  | { type: 'echo'; wsUrl: string; origin: string; users: number; turns: number; thinkMs: number }
  | { type: 'open-idle'; wsUrl: string; origin: string; cookies: string[]; parallel: number }
  | { type: 'close-idle' }
  | { type: 'close' };

/**
 * One HTTP run: 2xx answers per second, and their latency in ms (at full speed, each response's own
 * time; paced, from when the request was due).
 */
export interface HttpRun {
  rps: number;
  p50: number;
  /** Paced runs only. */
  p95?: number;
  p99: number;
  max: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Paced runs: how late requests went out against their schedule (the load process's own timers), in ms. */
  lagP50?: number;
  lagP99?: number;
  /** Share of the machine's CPU that processes outside the benchmark used meanwhile (set by bench.ts). */
  foreignCpu?: number;
}

/** A Daybook to talk to: its socket URL, and one signed-in user per cookie. */
export interface ChatServer {
  wsUrl: string;
  origin: string;
  cookies: string[];
}

/** Per measured turn, in ms: the whole turn, and the part the server (or the echo) added. */
export interface TurnTimes {
  totals: number[];
  server: number[];
  /** The server's part split at the model: message sent → model asked, and model done → reply received. */
  before: number[];
  after: number[];
}

export interface IdleSockets {
  open: number;
  failures: Record<string, number>;
  seconds: number;
}
