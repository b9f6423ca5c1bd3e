// Runs before every server test file (vitest.config.ts).
import { argon2id, HASH_OPTIONS } from '../modules/accounts/passwords.ts';

// Real argon2id at a cost fit for a suite that makes thousands of accounts: at the production cost
// (64 MiB, 3 passes) hashing took a sizeable share of the suite's CPU, and timed tests out on a busy
// machine. Django's own test settings do the same with a fast hasher. passwords.test.ts checks the
// production cost, and processes the tests start (deploy, end-to-end) run with it.
argon2id.options = { ...HASH_OPTIONS, memoryCost: 1024, timeCost: 1, parallelism: 1 };
