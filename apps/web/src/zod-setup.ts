// Imported first: zod probes for eval (to compile fast parsers) on the first parse, which our CSP
// (script-src 'self', no unsafe-eval) blocks and reports as a violation on every page.
// (`config`, not `z.config`: the build drops calls on `z` whose result is unused, vite.config.ts.)
import { config } from 'zod';

config({ jitless: true });
