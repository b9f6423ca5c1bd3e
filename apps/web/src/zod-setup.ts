// Imported first: zod probes for eval (to compile fast parsers) on the first parse, which our CSP
// (script-src 'self', no unsafe-eval) blocks and reports as a violation on every page.
import { z } from 'zod';

z.config({ jitless: true });
