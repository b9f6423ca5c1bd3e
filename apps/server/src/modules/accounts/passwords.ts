// Password hashing (argon2id) and the checks Django's default validators make, with their codes.
import { readFileSync } from 'node:fs';
import { PASSWORD_MIN_LENGTH } from '@daybook/contracts';
import argon2 from 'argon2';

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

export function passwordProblems(password: string, email?: string): PasswordProblem[] {
  const problems: PasswordProblem[] = [];
  const local = email?.split('@')[0]?.toLowerCase() ?? '';
  const lower = password.toLowerCase();
  if (local.length >= 4 && (lower.includes(local) || (lower.length >= 4 && local.includes(lower)))) {
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

export const hashPassword = (password: string) => argon2.hash(password, { type: argon2.argon2id });

// Compared against when the account does not exist, so both paths take the same time.
const DUMMY_HASH = argon2.hash('not-a-real-password-0', { type: argon2.argon2id });

export async function verifyPassword(hash: string | null | undefined, password: string): Promise<boolean> {
  if (!hash) {
    await argon2.verify(await DUMMY_HASH, password).catch(() => false);
    return false;
  }
  return argon2.verify(hash, password).catch(() => false);
}
