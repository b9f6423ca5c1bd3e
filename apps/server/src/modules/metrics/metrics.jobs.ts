// The background work's metrics: queue depths (read from the database at each scrape), failed job
// runs, and daily messages delivered.
import client from 'prom-client';

/** Jobs per queue, as the jobs module counts them. */
export interface QueueCounts {
  queue: string;
  waiting: number;
  active: number;
}

export function createJobMetrics(registers: client.Registry[]) {
  let queues: () => Promise<QueueCounts[]> = async () => [];
  // Both gauges are collected at once (prom-client reads every metric concurrently): one query serves
  // both, and a database that does not answer leaves them empty rather than failing the scrape.
  let counting: Promise<QueueCounts[]> | null = null;
  const counts = () => {
    counting ??= queues()
      .catch(() => [])
      .finally(() => {
        counting = null;
      });
    return counting;
  };
  const jobsGauge = (name: string, help: string, pick: (c: QueueCounts) => number) =>
    new client.Gauge({
      name,
      help,
      labelNames: ['queue'] as const,
      registers,
      async collect() {
        const found = await counts();
        this.reset();
        for (const c of found) this.set({ queue: c.queue }, pick(c));
      },
    });
  jobsGauge(
    'daybook_jobs_waiting',
    'Jobs waiting to run (new or to be retried), by queue; read from the database, so the same in every process.',
    (c) => c.waiting,
  );
  jobsGauge(
    'daybook_jobs_active',
    'Jobs running, by queue; read from the database, so the same in every process.',
    (c) => c.active,
  );
  const jobsFailed = new client.Counter({
    name: 'daybook_jobs_failed_total',
    help: 'Job runs that failed in this process, by queue; final="true" when the job will not run again.',
    labelNames: ['queue', 'final'] as const,
    registers,
  });

  const dailyDelivered = new client.Counter({
    name: 'daybook_daily_messages_delivered_total',
    help: 'Daily messages posted to users by this process.',
    registers,
  });

  return {
    /** Queue depths, read at each scrape. */
    collectJobs(counts: () => Promise<QueueCounts[]>) {
      queues = counts;
    },

    jobFailed(queue: string, final: boolean) {
      jobsFailed.inc({ queue, final: String(final) });
    },

    dailyDelivered() {
      dailyDelivered.inc();
    },
  };
}
