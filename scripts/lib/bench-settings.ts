// The settings every bench gives the server it measures: its own data folder (and scratch database
// on PostgreSQL), quiet JSON logs, a fixed secret and address, and the local fake model.

/** The address the benches' server believes it has; sockets and forms send it as their Origin. */
export const BENCH_ORIGIN = 'http://bench.local';

export function benchSettings(options: {
  dataDir: string;
  scratch: { url: string } | null;
  llmBaseUrl: string;
}): Record<string, string | undefined> {
  return {
    ...process.env,
    ...(options.scratch ? { DATABASE_URL: options.scratch.url } : {}),
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    LOG_FORMAT: 'json',
    DATA_DIR: options.dataDir,
    SECRET_KEY: 'bench-secret-key-0123456789-abcdefghijklmnop',
    PUBLIC_URL: BENCH_ORIGIN,
    LLM_BASE_URL: options.llmBaseUrl,
    LLM_MODEL: 'bench-model',
  };
}
