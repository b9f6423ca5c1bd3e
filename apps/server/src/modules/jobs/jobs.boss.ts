// pg-boss itself, on the jobs module's own connection, with the timings Daybook needs.
import type { FastifyBaseLogger } from 'fastify';
import PgBoss from 'pg-boss';
import { type JobsRepo, SCHEMA } from './jobs.repo.ts';

export interface BossDeps {
  executeSql: JobsRepo['executeSql'];
  /** Off: this process creates queues and sends jobs, and another one runs them. */
  runWorkers: boolean;
  log: FastifyBaseLogger;
  maintenanceIntervalSeconds?: number;
  cronIntervalSeconds?: number;
}

export function createBoss(deps: BossDeps): PgBoss {
  const boss = new PgBoss({
    db: { executeSql: deps.executeSql as PgBoss.Db['executeSql'] },
    schema: SCHEMA,
    // Expiring runs of dead processes and firing schedules is a worker's job.
    supervise: deps.runWorkers,
    schedule: deps.runWorkers,
    maintenanceIntervalSeconds: deps.maintenanceIntervalSeconds ?? 60,
    // pg-boss's defaults (30 s, 5 s) fire a minute's schedule up to ~45 s late (measured by the
    // daily bench); these bring it under ~14 s for two cheap queries every 10 and 2 s.
    cronMonitorIntervalSeconds: deps.cronIntervalSeconds ?? 10,
    cronWorkerIntervalSeconds: deps.cronIntervalSeconds ?? 2,
  });
  boss.on('error', (err) => deps.log.warn({ err }, 'job queue error'));
  return boss;
}
