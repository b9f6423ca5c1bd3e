// The answers the server puts into index.html for the web app's first GETs (who is signed in, their
// account, the site), keyed by path: apps/server/src/plugins/web-app.ts writes them, and
// apps/web/src/lib/boot.ts reads each once.
import { z } from 'zod';

/** The id of the `<script type="application/json">` element that carries them. */
export const BOOT_ELEMENT_ID = 'daybook-boot';

export const ZBootAnswer = z.object({ status: z.number().int().min(200).max(599), body: z.unknown() });
export type TBootAnswer = z.infer<typeof ZBootAnswer>;
export const ZBootAnswers = z.record(z.string(), ZBootAnswer);
export type TBootAnswers = z.infer<typeof ZBootAnswers>;
