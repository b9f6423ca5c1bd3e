// Password hashing (argon2id) and the checks Django's default validators make, with their codes.
import { readFileSync } from 'node:fs';
import { PASSWORD_MIN_LENGTH } from '@daybook/contracts';
import * as argon2 from '@node-rs/argon2';

const COMMON = new Set(
  readFileSync(new URL('./common-passwords.txt', import.meta.url), 'utf8')
    .split('\n')
    .map((l) => l.trim().toLowerCase())
    .filter(Boolean),
);

export interface PasswordProblem {
  code: 'password_too_short' | 'password_too_common' | 'password_entirely_numeric' | 'password_too_similar';
  message: string;
}

const MAX_SIMILARITY = 0.7;

/** Python's SequenceMatcher(a, b).quick_ratio(): shared characters (with multiplicity), over the lengths. */
function quickRatio(a: string, b: string): number {
  if (!a.length && !b.length) return 1;
  const counts = new Map<string, number>();
  for (const ch of b) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let matches = 0;
  for (const ch of a) {
    const left = counts.get(ch) ?? 0;
    if (left > 0) {
      matches++;
      counts.set(ch, left - 1);
    }
  }
  return (2 * matches) / ([...a].length + [...b].length);
}

/**
 * Django's UserAttributeSimilarityValidator on the email address: the password is compared with the
 * whole address, its local part, and each part between non-word characters.
 */
function tooSimilarToEmail(password: string, email: string): boolean {
  const lower = password.toLowerCase();
  const value = email.toLowerCase();
  const parts = [...value.split(/[^\p{L}\p{N}_]+/u), value.split('@')[0] ?? '', value].filter(Boolean);
  const length = [...lower].length;
  return parts.some((part) => {
    const partLength = [...part].length;
    // Django skips parts far shorter than the password: they cannot make it similar.
    if (length >= 10 * partLength && partLength < (MAX_SIMILARITY / 2) * length) return false;
    return quickRatio(lower, part) >= MAX_SIMILARITY;
  });
}

export function passwordProblems(password: string, email?: string): PasswordProblem[] {
  const problems: PasswordProblem[] = [];
  const local = email?.split('@')[0]?.toLowerCase() ?? '';
  const lower = password.toLowerCase();
  const containsLocal = local.length >= 4 && (lower.includes(local) || (lower.length >= 4 && local.includes(lower)));
  if (email && (containsLocal || tooSimilarToEmail(password, email))) {
    problems.push({ code: 'password_too_similar', message: 'The password is too similar to the email address.' });
  }
  if (password.length < PASSWORD_MIN_LENGTH) {
    problems.push({
      code: 'password_too_short',
      message: `This password is too short. It must contain at least ${PASSWORD_MIN_LENGTH} characters.`,
    });
  }
  if (COMMON.has(lower.trim())) problems.push({ code: 'password_too_common', message: 'This password is too common.' });
  if (/^\d+$/.test(password))
    problems.push({ code: 'password_entirely_numeric', message: 'This password is entirely numeric.' });
  return problems;
}

// As strong as node-argon2's defaults, which made the stored hashes (@node-rs/argon2's own are lighter).
// Algorithm 2 is Argon2id: the package's enum is a const enum, absent at run time.
export const HASH_OPTIONS = { algorithm: 2, memoryCost: 65_536, timeCost: 3, parallelism: 4, outputLen: 32 } as const;

/**
 * Every argon2 call goes through this object, so tests can count (and hold back) hashes and checks.
 * `options` stays HASH_OPTIONS in production; the test suite, which makes thousands of accounts, lowers
 * the cost (as Django's test settings pick a fast hasher), and passwords.test.ts checks the real one.
 */
export const argon2id = {
  options: HASH_OPTIONS as argon2.Options,
  hash: (password: string): Promise<string> => argon2.hash(password, argon2id.options),
  // The parameters come from the stored hash, whatever they were when it was made.
  verify: (digest: string, password: string): Promise<boolean> => argon2.verify(digest, password),
};

export const hashPassword = (password: string) => argon2id.hash(password);

// Compared against when the account does not exist, so both paths take the same time: made when first
// needed, and again if the cost hashes are made at has changed since.
let dummy: { options: argon2.Options; hash: Promise<string> } | undefined;
const DUMMY_PASSWORD = 'not-a-real-password-0';

export async function verifyPassword(hash: string | null | undefined, password: string): Promise<boolean> {
  if (!hash) {
    if (dummy?.options !== argon2id.options) dummy = { options: argon2id.options, hash: argon2id.hash(DUMMY_PASSWORD) };
    await argon2id.verify(await dummy.hash, password).catch(() => false);
    return false;
  }
  return argon2id.verify(hash, password).catch(() => false);
}
