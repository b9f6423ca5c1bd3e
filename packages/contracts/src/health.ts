import { z } from 'zod';

export const ZHealth = z.object({ status: z.literal('ok'), uptime_s: z.number() });
export type THealth = z.infer<typeof ZHealth>;

export const ZReadiness = z.object({
  status: z.enum(['ready', 'not_ready']),
  database: z.enum(['ok', 'unreachable']),
  migrations: z.object({ pending: z.array(z.string()) }),
});
export type TReadiness = z.infer<typeof ZReadiness>;
